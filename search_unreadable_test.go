package memtool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	"github.com/rogpeppe/go-internal/txtar"
)

// unreadableStore returns an encrypted directory store whose files
// a.md, d/e.md and z.md open with its key and hold "coffee", and three
// that do not open, each holding "coffee" in some form: b.md written
// under another key, c.md written in the clear by hand, d/f.md changed
// on disk after it was written.
func unreadableStore(t *testing.T) memtool.Store {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	key, _ := encrypt.NewKey("mine")
	other, _ := encrypt.NewKey("theirs")
	store, err := encrypt.New(fs, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := encrypt.New(fs, []encrypt.Key{other}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]memtool.Store{"a.md": store, "d/e.md": store, "z.md": store, "d/f.md": store, "b.md": foreign} {
		if err := s.Mkdir(ctx, "d"); err != nil && !errors.Is(err, memtool.ErrExist) {
			t.Fatal(err)
		}
		if err := s.WriteFile(ctx, name, []byte("tea\ncoffee in "+name+"\n"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "c.md"), []byte("coffee, typed in by hand\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "d", "f.md")
	b, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return store
}

// A search of an encrypted store in which some files do not open (another
// key, written in the clear, damaged) answers the lines of the files that
// do, and counts and names the others; it does not fail, which would
// hide every memory from search because of one file.
func TestSearchUnreadableFiles(t *testing.T) {
	ctx := context.Background()
	store := unreadableStore(t)
	res, err := memtool.Search(ctx, store, memtool.SearchQuery{Query: "coffee"}, 0)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	var got []string
	for _, m := range res.Matches {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	want := []string{"/memories/a.md:2", "/memories/d/e.md:2", "/memories/z.md:2"}
	if !slices.Equal(got, want) || res.Total != 3 {
		t.Errorf("matches %v (total %d), want %v", got, res.Total, want)
	}
	wantBad := []string{"/memories/b.md", "/memories/c.md", "/memories/d/f.md"}
	if res.Unreadable != 3 || !slices.Equal(res.UnreadablePaths, wantBad) {
		t.Errorf("unreadable: %d, %v; want 3, %v", res.Unreadable, res.UnreadablePaths, wantBad)
	}

	// A path naming one file that does not open: no lines, and that file.
	res, err = memtool.Search(ctx, store, memtool.SearchQuery{Query: "coffee", Path: "/memories/c.md"}, 0)
	if err != nil || res.Total != 0 || res.Unreadable != 1 || !slices.Equal(res.UnreadablePaths, []string{"/memories/c.md"}) {
		t.Errorf("search of /memories/c.md alone: %+v, %v", res, err)
	}

	// A directory without such files says nothing of them.
	res, err = memtool.Search(ctx, store, memtool.SearchQuery{Query: "tea", Path: "/memories/d/e.md"}, 0)
	if err != nil || res.Total != 1 || res.Unreadable != 0 || res.UnreadablePaths != nil {
		t.Errorf("search of /memories/d/e.md: %+v, %v", res, err)
	}
}

// Of many files that do not open, the result names the first
// MaxUnreadablePaths in path order and counts them all.
func TestSearchManyUnreadableFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	key, _ := encrypt.NewKey("mine")
	store, _ := encrypt.New(fs, []encrypt.Key{key}, nil)
	for i := range 250 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.md", 249-i)), []byte("plain coffee"), 0o600)
	}
	if err := store.WriteFile(ctx, "ok.md", []byte("sealed coffee"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	res, err := memtool.Search(ctx, store, memtool.SearchQuery{Query: "coffee"}, 0)
	if err != nil || res.Total != 1 || res.Unreadable != 250 || len(res.UnreadablePaths) != memtool.MaxUnreadablePaths {
		t.Fatalf("Search: total %d, unreadable %d, %d paths, %v", res.Total, res.Unreadable, len(res.UnreadablePaths), err)
	}
	for i, p := range res.UnreadablePaths {
		if want := fmt.Sprintf("/memories/f%03d.md", i); p != want {
			t.Errorf("unreadable path %d is %s, want %s", i, p, want)
		}
	}
	text := memtool.SearchText(res, memtool.DefaultMaxViewChars)
	if !strings.Contains(text, "250 files could not be read") || !strings.Contains(text, "/memories/f000.md") || strings.Contains(text, "plain coffee") {
		t.Errorf("SearchText: %q", text)
	}
}

// A store failure that is not about one file (the store gone, a read
// that fails for another reason) still fails the search: only a file the
// store refuses with a reason for the model is passed over.
func TestSearchUnreadableOnlyRefusals(t *testing.T) {
	ctx := context.Background()
	store := unreadableStore(t)
	broken := errors.New("disk on fire")
	for _, err := range []error{broken, errors.Join(memtool.ErrBusy, memtool.Refusal("The file is busy."))} {
		if _, got := memtool.Search(ctx, failingReads{store, "a.md", err}, memtool.SearchQuery{Query: "coffee"}, 0); !errors.Is(got, err) {
			t.Errorf("Search with a read failing with %v: %v", err, got)
		}
	}
}

// What the model reads from memory_search when files do not open: the
// golden text in testdata/search/unreadable.txtar, one section per input
// (go test -run TestSearchUnreadableText -update rewrites it).
func TestSearchUnreadableText(t *testing.T) {
	ctx := context.Background()
	mem := memtool.New(unreadableStore(t), &memtool.Options{MaxViewChars: 700})
	inputs := []string{
		`{"query":"coffee"}`,
		`{"query":"coffee","limit":1}`,
		`{"query":"nowhere"}`,
		`{"query":"coffee","path":"/memories/c.md"}`,
		`{"query":"tea","path":"/memories/d/e.md"}`,
		`{"query":"o","path":"/memories/d"}`,
	}
	file := filepath.Join("testdata", "search", "unreadable.txtar")
	ar := &txtar.Archive{Comment: []byte("memory_search over an encrypted store in which b.md (another key), c.md\n(written in the clear) and d/f.md (damaged) do not open, with a view\nlimit of 700 characters. Each section is an input, then its answer.\n")}
	for _, in := range inputs {
		r := mem.SearchTool(ctx, []byte(in))
		if r.IsError {
			t.Errorf("%s: an error: %s", in, r.Text)
		}
		ar.Files = append(ar.Files, txtar.File{Name: in, Data: []byte(r.Text + "\n")})
	}
	got := txtar.Format(ar)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("memory_search's answers differ from %s (run with -update to see):\n%s", file, got)
	}
}

// The notes of a long answer and of the files not read fit in the view
// limit together.
func TestSearchUnreadableTextFits(t *testing.T) {
	res := memtool.SearchResult{Total: 1000, Unreadable: 500}
	for i := range 1000 {
		res.Matches = append(res.Matches, memtool.SearchMatch{Path: "/memories/f.md", Line: i + 1, Text: "coffee"})
	}
	for i := range memtool.MaxUnreadablePaths {
		res.UnreadablePaths = append(res.UnreadablePaths, fmt.Sprintf("/memories/%s%02d.md", strings.Repeat("x", 40), i))
	}
	for _, limit := range []int{300, 2000, memtool.DefaultMaxViewChars} {
		text := memtool.SearchText(res, limit)
		if n := len([]rune(text)); n > limit || !strings.Contains(text, "Output cut at") || !strings.HasSuffix(text, "View one of them to see why.]") {
			t.Errorf("limit %d: %d characters: %q", limit, n, text)
		}
	}
}
