package limits_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/limits"
)

// TestLinkCountsOnce checks that a directory store holding a symbolic
// link to an ancestor (made by its operator) counts each entry once
// against MaxFiles: counting through the link, a store of 4 entries was
// taken for 27, and a write well within the limit was refused.
func TestLinkCountsOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "d", "up")); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m := memtool.New(limits.New(s, &limits.Options{MaxFiles: 4}), nil)
	// d, d/up, d/a.md, b.md: four entries.
	for _, p := range []string{"/memories/d/a.md", "/memories/b.md"} {
		if res := m.Execute(context.Background(), &memtool.Create{Path: p, FileText: "x"}); res.IsError {
			t.Errorf("create %s within the limit: %s", p, res.Text)
		}
	}
}
