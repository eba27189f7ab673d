package sqlitestore_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree/sqltreetest"
)

func TestSearch(t *testing.T) {
	sqltreetest.Search(t, func(t testing.TB) string { return filepath.Join(t.TempDir(), "m.db") },
		func(t *testing.T, path string) memtool.Store { return open(t, path) })
}

// The index names the files that hold the terms (in any case: the caller
// checks the case) and the files still pending, and only them; a
// replaced or removed file's old text leaves the FTS5 index when it is
// folded, and a file holding a NUL byte never enters it.
func TestSearchFilesUsesIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path)
	ctx := t.Context()
	write := func(name, text string) {
		t.Helper()
		if err := s.WriteFile(ctx, name, []byte(text), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "the Quokka smiles")
	write("b.md", "a wombat")
	write("c.md", "QUOKKAS and wombats")
	write("nul.md", "quokka\x00")
	write("gone.md", "quokka")
	for i := range 150 {
		// Replaced many times: its old texts must not pile up.
		write("r.md", fmt.Sprintf("quokka %d", i))
		write(fmt.Sprintf("w%03d.md", i), "wombat")
	}
	write("r.md", "no longer")
	if err := s.Remove(ctx, "gone.md"); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pending := map[string]bool{}
	rows, err := db.Query(`SELECT i.name FROM memtool_fts_pending p JOIN memtool_fts_id i ON i.id = p.id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		pending[name] = true
	}
	rows.Close()
	if len(pending) == 0 || len(pending) >= 64 {
		t.Fatalf("%d files pending; want some, and fewer than 64", len(pending))
	}
	// Each file not pending is in the FTS5 index once, unless it holds a
	// NUL byte; nothing else is, but the old text of a pending one.
	var docs, ids, orphans int
	err = db.QueryRow(`SELECT (SELECT count(*) FROM memtool_fts_docsize), (SELECT count(*) FROM memtool_fts_id),
		(SELECT count(*) FROM memtool_fts_docsize WHERE id NOT IN (SELECT id FROM memtool_fts_id) AND id NOT IN (SELECT id FROM memtool_fts_pending))`).Scan(&docs, &ids, &orphans)
	if err != nil {
		t.Fatal(err)
	}
	if docs > ids || orphans > 0 || docs < ids-len(pending)-1 {
		t.Errorf("the FTS5 index holds %d texts (%d of no file) for %d files, %d pending", docs, orphans, ids, len(pending))
	}

	// A write of the text a file holds touches no index: w000.md, folded
	// long ago, does not become pending.
	write("w000.md", "wombat")
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM memtool_fts_pending p JOIN memtool_fts_id i ON i.id = p.id WHERE i.name = 'w000.md'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("w000.md pending after a write of its own text: %d, %v", n, err)
	}

	var got []string
	err = s.SearchFiles(ctx, "", memtool.IndexQuery{Terms: []string{"quokka"}, FoldCase: true, Limit: 1 << 20}, func(name string, data []byte) error {
		got = append(got, name)
		return nil
	})
	want := []string{"a.md", "c.md"}
	for name := range pending {
		if !slices.Contains(want, name) {
			want = append(want, name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("SearchFiles(quokka): %v, %v; want %v", got, err, want)
	}
}

// A query holding a NUL byte matches no line (search skips the files
// that hold one), as on every other store: the index is asked for the
// trigrams it can hold, not for a query SQLite would cut at the NUL.
func TestSearchNUL(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "m.db"))
	ctx := t.Context()
	for name, text := range map[string]string{"a.md": "abc\x00def", "b.md": "abcdef\n\x00\x00\x00", "c.md": "abcdef"} {
		if err := s.WriteFile(ctx, name, []byte(text), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []memtool.SearchQuery{
		{Query: "abc\x00def", CaseSensitive: true},
		{Query: "abc\x00def"},
		{Query: "c\x00d"},
		{Query: "\x00\x00\x00"},
		{Query: `abc\x00`, Regex: true},
	} {
		res, err := memtool.Search(ctx, s, q, 0)
		if err != nil || res.Total != 0 {
			t.Errorf("Search(%+q) = %+v, %v; want no match", q.Query, res, err)
		}
	}
	res, err := memtool.Search(ctx, s, memtool.SearchQuery{Query: "bcde"}, 0)
	if err != nil || res.Total != 1 || res.Matches[0].Path != "/memories/c.md" {
		t.Errorf("Search(bcde) = %+v, %v; want c.md", res, err)
	}
}
