package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
)

// Names holding the wildcards of LIKE (_ and %), a backslash, and others
// that share a prefix with a directory are kept apart from it: RemoveAll
// and Rename of one directory touch its subtree alone, and a search below
// one finds nothing of the others.
func TestWildcardNames(t *testing.T) {
	checkWildcardNames(t, open(t, filepath.Join(t.TempDir(), "m.db")))
}

// So are they in a tenant's store, and a tenant whose id extends
// another's by a wildcard ("t1_" beside "t1") keeps its files.
func TestWildcardNamesOfATenant(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "m.db"))
	ts, err := s.Tenant(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := s.Tenant(context.Background(), "t1_")
	other.WriteFile(context.Background(), "a_b", []byte("other tenant"), memtool.CreateOnly)
	checkWildcardNames(t, ts)
	if got, err := other.ReadFile(context.Background(), "a_b", 100); err != nil || string(got) != "other tenant" {
		t.Errorf("other tenant's file: %q, %v", got, err)
	}
}

// Two stores of one file (as two processes) lose no update of one file,
// and a RemoveAll racing creates below the directory it removes leaves no
// entry whose parent is gone.
func TestRacesOfTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	a, b := open(t, path), open(t, path)
	checkRaces(t, a, b, func() []string { return sqliteOrphans(t, path) })
}

// sqliteOrphans returns the parents of the entries of the file at path
// whose parent directory has no entry.
func sqliteOrphans(t *testing.T, path string) []string {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT tenant, parent, name, dir FROM memtool_entries`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	dirs := map[string]bool{}
	var all [][2]string
	for rows.Next() {
		var tenant, parent, name string
		var dir bool
		if err := rows.Scan(&tenant, &parent, &name, &dir); err != nil {
			t.Fatal(err)
		}
		full := name
		if parent != "" {
			full = parent + "/" + name
		}
		if dir {
			dirs[tenant+"\x00"+full] = true
		}
		all = append(all, [2]string{tenant, parent})
	}
	var out []string
	for _, r := range all {
		if r[1] != "" && !dirs[r[0]+"\x00"+r[1]] {
			out = append(out, r[1])
		}
	}
	return out
}

// wildcardNames are siblings whose names differ from "a_b" only where LIKE
// or a prefix range could confuse them.
var wildcardNames = []string{"a", "a_b", "axb", "a%b", "a\\b", "a-b", "a.b", "a0", "a_", "a%", "b"}

// makeWildcardTree makes each of wildcardNames a directory holding a
// file and a directory with a file.
func makeWildcardTree(t *testing.T, s memtool.Store) {
	t.Helper()
	ctx := context.Background()
	for _, n := range wildcardNames {
		if err := s.Mkdir(ctx, n); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []string{n + "/f", n + "/d", n + "/d/g"} {
			var err error
			if strings.HasSuffix(sub, "/d") {
				err = s.Mkdir(ctx, sub)
			} else {
				err = s.WriteFile(ctx, sub, []byte(sub), memtool.CreateOnly)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// walkTree lists every name below dir.
func walkTree(t *testing.T, s memtool.Store, dir string) []string {
	t.Helper()
	var out []string
	fis, err := s.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatalf("readdir %q: %v", dir, err)
	}
	for _, fi := range fis {
		name := fi.Name
		if dir != "" {
			name = dir + "/" + fi.Name
		}
		out = append(out, name)
		if fi.IsDir() {
			out = append(out, walkTree(t, s, name)...)
		}
	}
	sort.Strings(out)
	return out
}

// checkWildcardNames removes, renames and searches directories of
// makeWildcardTree, and checks that their siblings are left as they were.
func checkWildcardNames(t *testing.T, s memtool.Store) {
	ctx := context.Background()
	makeWildcardTree(t, s)
	before := walkTree(t, s, "")
	if err := s.(memtool.RemoveAller).RemoveAll(ctx, "a_b"); err != nil {
		t.Fatal(err)
	}
	if err := s.(memtool.Renamer).Rename(ctx, "a%b", "z"); err != nil {
		t.Fatal(err)
	}
	if err := s.(memtool.Renamer).Rename(ctx, "a", "b/a"); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range before {
		switch {
		case n == "a_b" || strings.HasPrefix(n, "a_b/"):
		case n == "a%b" || strings.HasPrefix(n, "a%b/"):
			want = append(want, "z"+strings.TrimPrefix(n, "a%b"))
		case n == "a" || strings.HasPrefix(n, "a/"):
			want = append(want, "b/a"+strings.TrimPrefix(n, "a"))
		default:
			want = append(want, n)
		}
	}
	sort.Strings(want)
	got := walkTree(t, s, "")
	if !slices.Equal(got, want) {
		t.Errorf("after RemoveAll(a_b), Rename(a%%b, z), Rename(a, b/a):\n got %q\nwant %q", got, want)
	}
	// Search below "a_" must not return files of "a_b"-like siblings... (a_b is gone) nor axb.
	if sr, ok := s.(memtool.Searcher); ok {
		var names []string
		err := sr.SearchFiles(ctx, "a_", memtool.IndexQuery{Terms: []string{"a_/"}, Limit: 1 << 20}, func(name string, _ []byte) error {
			names = append(names, name)
			return nil
		})
		if err == nil {
			for _, n := range names {
				if !strings.HasPrefix(n, "a_/") {
					t.Errorf("search below a_ returned %q", n)
				}
			}
		}
	}
}

// checkRaces runs, on two stores of one database (two processes),
// read-modify-writes of one file and a RemoveAll racing creates below
// the directory it removes; no update may be lost, and no entry may be
// left whose parent is gone.
func checkRaces(t *testing.T, a, b memtool.Store, orphans func() []string) {
	ctx := context.Background()
	if err := a.WriteFile(ctx, "n", []byte("0"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	const per = 40
	var wg sync.WaitGroup
	for _, s := range []memtool.Store{a, b, a, b} {
		wg.Go(func() {
			for range per {
				for {
					err := s.Update(ctx, "n", 100, func(old []byte) ([]byte, error) {
						n, err := strconv.Atoi(string(old))
						if err != nil {
							return nil, err
						}
						return []byte(strconv.Itoa(n + 1)), nil
					})
					if err == nil {
						break
					}
					if !errors.Is(err, memtool.ErrBusy) {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if got, err := a.ReadFile(ctx, "n", 100); err != nil || string(got) != strconv.Itoa(4*per) {
		t.Errorf("after %d increments from two stores: %q, %v (lost updates)", 4*per, got, err)
	}
	for i := range 30 {
		d := "r" + strconv.Itoa(i)
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := memtool.MkdirAll(ctx, a, d+"/x/y"); err != nil && !errors.Is(err, memtool.ErrNotExist) {
				t.Log("mkdirall:", err)
			}
		})
		wg.Go(func() {
			for range 3 {
				b.WriteFile(ctx, d+"/x/y/f", []byte("f"), memtool.CreateOnly)
				b.Mkdir(ctx, d+"/x/z")
			}
		})
		wg.Go(func() {
			for range 3 {
				b.(memtool.RemoveAller).RemoveAll(ctx, d)
				a.(memtool.Renamer).Rename(ctx, d, d+"-moved")
			}
		})
		wg.Wait()
	}
	if o := orphans(); len(o) > 0 {
		t.Errorf("entries whose parent directory is missing: %q", o)
	}
}
