package memtool_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/sqlitestore"
)

// A name the path gate refuses, put in a directory store by other means,
// is left out of a search's answer as a listing leaves it out: a line
// break in it would forge a PATH:LINE:TEXT line of the model's answer, a
// bidi override reorder it, bytes not UTF-8 make the answer not UTF-8.
// Also as a directory, and when the file is named in an unreadable note.
func TestSearchLeavesOutUnshowableNames(t *testing.T) {
	hostile := []string{"a.md:1:x\nforged.md", "tab\tx.md", "b\u202etxt.md", "c\u2028d.md", "bad\xff.md", "del\x7f.md"}
	dir := t.TempDir()
	layNames(t, dir, append([]string{"ok.md"}, hostile...), "coffee\n")
	if err := os.MkdirAll(filepath.Join(dir, "d\nx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d\nx", "in.md"), []byte("coffee\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := memtool.New(s, nil)
	res, err := m.Search(context.Background(), memtool.SearchQuery{Query: "coffee"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mt := range res.Matches {
		got = append(got, mt.Path)
	}
	want := []string{"/memories/ok.md", "/memories/sub/ok.md"}
	if strings.Join(got, "|") != strings.Join(want, "|") || res.Total != 2 {
		t.Errorf("search found %q (total %d), want %q", got, res.Total, want)
	}
	text := m.SearchTool(context.Background(), []byte(`{"query":"coffee"}`)).Text
	if !utf8.ValidString(text) || strings.Contains(text, "forged") || strings.ContainsAny(text, "\t\u202e\u2028\x7f") {
		t.Errorf("the answer shows an unshowable name: %q", text)
	}
}

// The same through an index (SQLite): a file stored under such a name by
// a program that writes the store directly is left out.
func TestIndexedSearchLeavesOutUnshowableNames(t *testing.T) {
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, n := range []string{"ok.md", "a.md:1:x\nforged.md", "b\u202etxt.md", "d\nx/in.md"} {
		if dir := filepath.Dir(n); dir != "." {
			if err := s.Mkdir(ctx, dir); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.WriteFile(ctx, n, []byte("coffee\n"), memtool.Replace); err != nil {
			t.Fatalf("the store refuses the name %q, so nothing here is tested: %v", n, err)
		}
	}
	res, err := memtool.New(s, nil).Search(ctx, memtool.SearchQuery{Query: "coffee"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || res.Matches[0].Path != "/memories/ok.md" || res.Total != 1 {
		t.Errorf("search found %+v (total %d), want only /memories/ok.md", res.Matches, res.Total)
	}
}
