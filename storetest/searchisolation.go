package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// searchNeighbours are the other tenants of testSearchTenants: ids that
// share a prefix with its tenant, "t", or sort next to it.
var searchNeighbours = []string{"t1", "t.x", "t_", "t-", "s", "u"}

// neighbourTree is what a neighbour holds: the battery's names, each file
// with a line that every query of the battery matches more often, and
// files of names the battery's tenant does not have, in directories named
// like its own (notes, notes2) and with LIKE's wildcards, enough of them
// (more than an index's pending list holds, 64 files on SQLite) that an
// index holds some in its main part.
func neighbourTree(id string) tree {
	line := "\nalpha ALPHA line gamma straße ΣΊΣΥΦΟΣ kelvin k sign long s s a+b (c) [d] * ? ^$ . \\ | {2} caf\uFFFD " + id + "\n"
	tr := tree{}
	for name, v := range searchTree() {
		if data, ok := strings.CutPrefix(v, "file:"); ok && !strings.Contains(data, "\x00") {
			v += line
		}
		tr[name] = v
	}
	for _, d := range []string{"notes/sub2", "notes3", "notes%", "notes_", "note", "n%tes"} {
		tr[d] = "dir"
		for i := range 12 {
			tr[fmt.Sprintf("%s/n%d.md", d, i)] = "file:" + line
		}
	}
	return tr
}

// testSearchTenants checks that a search of one tenant finds its own
// files alone, whatever its neighbours hold, write, move and remove: one
// index that spans the tenants of a database must keep to the tenant
// searched.
func testSearchTenants(t *testing.T, s memtool.Tenanted) {
	ctx := t.Context()
	var neighbours []memtool.Store
	for _, id := range searchNeighbours {
		n := tenant(t, s, id)
		makeTree(t, n, neighbourTree(id))
		neighbours = append(neighbours, n)
	}
	ts := tenant(t, s, "t")
	files := makeTree(t, ts, searchTree())
	files["notes/own.md"] = "file:zanzibar quokka\n"
	mustWrite(t, ts, "notes/own.md", "zanzibar quokka\n")
	check := func(step string) {
		t.Helper()
		for _, q := range searchQueries {
			want := searchOracle(t, files, q)
			got, err := memtool.Search(ctx, ts, q, searchReadLimit)
			if err != nil || !equalResults(got, want) {
				t.Errorf("after %s: Search(%+v) of tenant t: %v\n got %s\nwant %s", step, q, err, formatResult(got), formatResult(want))
			}
		}
	}
	check("writing the neighbours")
	for i, n := range neighbours {
		id := searchNeighbours[i]
		steps := []func() error{
			func() error { return memtool.Move(ctx, n, "notes/sub", "notes/sub3", noLimit) },
			func() error { return memtool.Move(ctx, n, "notes3", "notes/moved", noLimit) },
			func() error {
				return n.WriteFile(ctx, "notes/a.md", []byte("alpha "+id+" replaced\n"), memtool.Replace)
			},
			func() error { return n.Remove(ctx, "notes2/x.md") },
			func() error { return memtool.RemoveAll(ctx, n, "notes%") },
		}
		for j, fn := range steps {
			if err := fn(); err != nil {
				t.Fatalf("neighbour %s, change %d: %v", id, j, err)
			}
		}
	}
	check("changing the neighbours")
	// And the other way: no neighbour finds t's own file.
	for i, n := range neighbours {
		got, err := memtool.Search(ctx, n, memtool.SearchQuery{Query: "zanzibar"}, searchReadLimit)
		if err != nil || got.Total != 0 {
			t.Errorf("Search(zanzibar) of tenant %s: %v\n got %s\nwant nothing (t's file)", searchNeighbours[i], err, formatResult(got))
		}
	}
}

// testSearchOwnEntries checks that the index of s (a memtool.Searcher)
// gives only files the model may name, never an entry that the store or a
// policy keeps for itself (expiry's index of accesses holds the names of
// the files, so a term of a name finds it in an index that holds it).
func testSearchOwnEntries(t *testing.T, s memtool.Store) {
	makeTree(t, s, searchTree())
	for _, term := range []string{"notes", "meta.txt", "access", "version"} {
		err := s.(memtool.Searcher).SearchFiles(t.Context(), "", memtool.IndexQuery{Terms: []string{term}, Limit: noLimit},
			func(name string, _ []byte) error {
				if _, _, err := memtool.CleanPath(memtool.VirtualPath(name)); err != nil {
					t.Errorf("SearchFiles(%q) gave %q, which is not the model's: %v", term, name, err)
				}
				return nil
			})
		if err != nil {
			t.Errorf("SearchFiles(%q): %v", term, err)
		}
	}
}
