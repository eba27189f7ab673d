package memtool_test

import (
	"context"
	"os"
	"path/filepath"
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
	defer s.Close()
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
