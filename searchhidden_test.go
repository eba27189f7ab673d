package memtool_test

import (
	"context"
	"github.com/memtool/memtool/filestore"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
)

// searchNoIndex is a store without its search index: Search scans it.
type searchNoIndex struct{ memtool.Store }

// Index and scan skip the same hidden entries below the path searched
// (a name starting with ".", node_modules, at any depth), and both search
// a hidden directory the path itself names.
func TestIndexAndScanSkipHidden(t *testing.T) {
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	for _, d := range []string{".h", ".h/in", "node_modules", "a", "a/node_modules", "a/.g", "a/b"} {
		if err := s.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".top.md", ".h/x.md", ".h/in/y.md", "node_modules/n.md", "a/node_modules/n.md", "a/.g/g.md", "a/b/.z.md", "a/b/ok.md", "ok.md", ".h/in/.deeper.md"} {
		if err := s.WriteFile(ctx, f, []byte("zebra stripes\n"), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"":                  {"/memories/a/b/ok.md", "/memories/ok.md"},
		"/memories/.h":      {"/memories/.h/in/y.md", "/memories/.h/x.md"},
		"/memories/.h/in/":  {"/memories/.h/in/y.md"},
		"/memories/a":       {"/memories/a/b/ok.md"},
		"/memories/a/.g":    {"/memories/a/.g/g.md"},
		"/memories/.top.md": {"/memories/.top.md"},
	}
	for p, w := range want {
		for _, st := range []memtool.Store{s, searchNoIndex{s}} {
			res, err := memtool.Search(ctx, st, memtool.SearchQuery{Query: "zebra", Path: p}, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Matches {
				got = append(got, m.Path)
			}
			if !slices.Equal(got, w) || res.Total != len(w) {
				_, scan := st.(searchNoIndex)
				t.Errorf("search of %q (scan %v): %q, want %q", p, scan, got, w)
			}
		}
	}
}

// strayIndex is a store whose index also names files outside the
// directory asked for: a sibling whose name the directory's is a prefix
// of (notes2 for notes), as a LIKE pattern or a range of keys may.
type strayIndex struct{ memtool.Store }

func (s strayIndex) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(string, []byte) error) error {
	for _, n := range []string{"notes/a.md", "notes2/b.md", "notesb.md", "other/c.md"} {
		if err := fn(n, []byte("zebra\n")); err != nil {
			return err
		}
	}
	return nil
}

// A search of a directory answers only files below it, whatever an index
// names: an index that names a file elsewhere (a bug in a store's query,
// a neighbour's file) does not put it in the answer.
func TestIndexAnswersOnlyBelowPath(t *testing.T) {
	base, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	if err := base.Mkdir(t.Context(), "notes"); err != nil {
		t.Fatal(err)
	}
	res, err := memtool.Search(t.Context(), strayIndex{base}, memtool.SearchQuery{Query: "zebra", Path: "/memories/notes"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || len(res.Matches) != 1 || res.Matches[0].Path != "/memories/notes/a.md" {
		t.Errorf("search of /memories/notes: %+v, want only /memories/notes/a.md", res)
	}
}
