package memtool_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// TestSearchWalksEachDirectoryOnce checks that a search of a directory
// store with symbolic links inside it (links to an ancestor, two names of
// one directory) reads each directory once, under its own name: such
// links made it find one file hundreds of times, walking round until the
// link limit, once more for every link at every level. A link to a
// directory outside the tree searched is still followed.
func TestSearchWalksEachDirectoryOnce(t *testing.T) {
	s := linkedStore(t)
	mem := memtool.New(s, nil)
	for _, c := range []struct{ path, want string }{
		{"/memories", "/memories/d/a.md"},
		{"/memories/x", "/memories/x/out/a.md"},
	} {
		res, err := mem.Search(context.Background(), memtool.SearchQuery{Query: "zebra", Path: c.path})
		if err != nil || res.Total != 1 || res.Matches[0].Path != c.want {
			t.Errorf("search of %s: %d matches %v, %v; want one, in %s", c.path, res.Total, res.Matches[:min(3, len(res.Matches))], err, c.want)
		}
	}
}

// linkedStore is a directory store holding d/a.md, and the empty
// directories e and x, with symbolic links inside it: d/up and e/up to
// the root, e/same and x/out to d.
func linkedStore(t *testing.T) *filestore.Store {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"d", "e", "x"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "a.md"), []byte("zebra\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"d/up": "..", "e/up": "..", "e/same": "../d", "x/out": "../d"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestWalkWalksEachDirectoryOnce checks that Walk on a directory store
// with symbolic links inside it walks each directory once: a link is an
// entry, but Walk does not walk into one that leads back into the tree
// walked, so a link to an ancestor neither repeats its files (the limits
// policy counted them: TestLinkCountsOnce) nor walks round until the link
// limit. A link out of the tree walked is walked into.
func TestWalkWalksEachDirectoryOnce(t *testing.T) {
	s := linkedStore(t)
	for _, c := range []struct {
		root string
		want []string
	}{
		{"", []string{"", "d", "d/a.md", "d/up", "e", "e/same", "e/up", "x", "x/out"}},
		// x/out leads out of x, to d, whose up leads to the root: both
		// are walked into, once; below them, every link back is an
		// entry only.
		{"x", []string{"x", "x/out", "x/out/a.md", "x/out/up", "x/out/up/d", "x/out/up/e", "x/out/up/e/same", "x/out/up/e/up", "x/out/up/x"}},
		{"d", []string{"d", "d/a.md", "d/up", "d/up/d", "d/up/e", "d/up/e/same", "d/up/e/up", "d/up/x", "d/up/x/out"}},
	} {
		var got []string
		err := memtool.Walk(context.Background(), s, c.root, func(name string, _ memtool.FileInfo) error {
			got = append(got, name)
			return nil
		})
		slices.Sort(got)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Walk from %q: %q, %v; want %q", c.root, got, err, c.want)
		}
	}
}
