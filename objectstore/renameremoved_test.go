package objectstore_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/memtool/memtool"
)

// A directory rename moves old/sub/x.txt; then, before the rename deletes
// old/sub's marker (files go first), another process removes old/sub,
// empty by then. The moved directory new/sub stays with x.txt in it: the
// rename never leaves a file without its directory.
func TestS3DirRenameKeepsSubdirectoryOfMovedFiles(t *testing.T) {
	ctx := context.Background()
	mine := renameWithSubRemoved(t, "old/sub/x.txt")
	checkContents(t, mine, map[string]string{"new/sub/x.txt": "x", "old/sub/x.txt": "(missing)"})
	if fi, err := mine.Stat(ctx, "new/sub"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(new/sub) = %v, %v, want the directory of new/sub/x.txt", fi, err)
	}
	if err := mine.WriteFile(ctx, "new/sub/y.txt", []byte("y"), memtool.CreateOnly); err != nil {
		t.Errorf("creating new/sub/y.txt: %v", err)
	}
}

// An empty subdirectory that another process removes while a rename of
// its directory finishes is removed: its copy is undone, as if the
// removal came first.
func TestS3DirRenameDropsEmptySubdirectoryRemovedMeanwhile(t *testing.T) {
	ctx := context.Background()
	mine := renameWithSubRemoved(t, "old/x.txt")
	checkContents(t, mine, map[string]string{"new/x.txt": "x"})
	for _, name := range []string{"new/sub", "old/sub", "old"} {
		if _, err := mine.Stat(ctx, name); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want ErrNotExist", name, err)
		}
	}
}

// renameWithSubRemoved makes old/sub and the file file (with content
// "x"), then renames old to new while another process removes old/sub,
// empty by then, just before the rename deletes old/sub's marker (files
// go first). Both must succeed.
func renameWithSubRemoved(t *testing.T, file string) memtool.Store {
	t.Helper()
	ctx := context.Background()
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old/sub/.memtool-dir", act: func(theirs memtool.Store) error {
		return theirs.Remove(ctx, "old/sub")
	}}
	mine := raceStore(t, il)
	mkdir(t, mine, "old")
	mkdir(t, mine, "old/sub")
	write(t, mine, file, "x")
	if err := mine.Rename(ctx, "old", "new"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	if err := il.err(t); err != nil {
		t.Fatalf("the other process's Remove(old/sub): %v", err)
	}
	return mine
}
