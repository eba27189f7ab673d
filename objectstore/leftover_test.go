package objectstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
)

// TestFileBucketNameOfRemovedTree: on a file+blob bucket, the name of a
// removed directory that held directories takes a file, by create or by
// rename, as on every store; a file below the name (an object left
// without its directories) is never removed to make way.
func TestFileBucketNameOfRemovedTree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newStore(t, fileBucket(dir), "")
	mkdir(t, s, "a")
	mkdir(t, s, "a/b")
	mkdir(t, s, "a/b/c")
	write(t, s, "a/b/c/x.txt", "x")
	if err := s.RemoveAll(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "a", []byte("file a"), memtool.CreateOnly); err != nil {
		t.Errorf("creating the file a: %v", err)
	}
	mkdir(t, s, "d")
	mkdir(t, s, "d/e")
	if err := s.RemoveAll(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	write(t, s, "z.txt", "z")
	if err := s.Rename(ctx, "z.txt", "d"); err != nil {
		t.Errorf("renaming z.txt to d: %v", err)
	}
	if err := s.WriteFile(ctx, "d", []byte("replaced"), memtool.Replace); err != nil {
		t.Errorf("replacing d: %v", err)
	}
	checkContents(t, s, map[string]string{"a": "file a", "d": "replaced", "z.txt": "(missing)"})

	if err := os.MkdirAll(filepath.Join(dir, "f", "k", "l", "m"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f", "k", "l", "y.txt"), []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "k", []byte("file k"), memtool.CreateOnly); err == nil {
		t.Errorf("creating the file k over the object k/l/y.txt succeeded")
	}
	checkContents(t, s, map[string]string{"k/l/y.txt": "y"})
}
