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

// TestReplaceThroughLinkCountsOldFile checks that a write replacing a file
// through a directory link (made by the store's operator) takes the old
// file off the count: the walk names the file by its real path, and a
// replace that adds no entry and no byte was refused as a new file, by
// MaxFiles and by MaxBytes, with a count one entry (and the whole old
// file) too high.
func TestReplaceThroughLinkCountsOldFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "a.md"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	// l, d and d/a.md: three entries, five bytes, each limit reached.
	for _, opts := range []limits.Options{{MaxFiles: 3}, {MaxBytes: 5}} {
		ls := limits.New(s, &opts)
		if err := ls.WriteFile(ctx, "l/a.md", []byte("HELLO"), memtool.Replace); err != nil {
			t.Errorf("%+v: replacing l/a.md with as many bytes: %v", opts, err)
		}
		if err := ls.WriteFile(ctx, "l/b.md", []byte("x"), memtool.Replace); err == nil {
			t.Errorf("%+v: a new file l/b.md past the limit was written", opts)
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "d", "a.md")); err != nil || string(got) != "HELLO" {
		t.Errorf("d/a.md: %q, %v", got, err)
	}
}
