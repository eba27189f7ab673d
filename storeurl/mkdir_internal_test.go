package storeurl

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSQLiteFolderMadeDurably: the folders Open makes for a new SQLite
// file are made with durable.MkdirAll, which fsyncs the parent of each,
// so that a power loss after the store's first acknowledged write cannot
// take away the folder, and the database with it. They were made with
// os.MkdirAll, and nothing fsynced the folder's parent.
func TestSQLiteFolderMadeDurably(t *testing.T) {
	var made []string
	real := mkdirAll
	mkdirAll = func(dir string, perm os.FileMode) error {
		made = append(made, dir)
		return real(dir, perm)
	}
	t.Cleanup(func() { mkdirAll = real })

	folder := filepath.Join(t.TempDir(), "new", "folder")
	_, closer, err := Open(t.Context(), "sqlite://"+filepath.Join(folder, "m.db"), &Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	closer.Close()
	if !slices.Equal(made, []string{folder}) {
		t.Errorf("folders made durably: %q, want %q", made, folder)
	}
}
