package main

import (
	"context"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
)

// TestFirstListed: the quick look at a store's first file finds the file
// that walkMemory visits first, on a store that lists names, and gives up
// ("") on one that does not, leaving the walk to findFile.
func TestFirstListed(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	mem := memstore.New()
	for _, s := range []memtool.Store{fs, mem} {
		for _, dir := range []string{"a", "b", "b/c"} {
			if err := s.Mkdir(ctx, dir); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"b/c/deep.md", "b/z.md", "y.md"} {
			if err := s.WriteFile(ctx, f, []byte("text"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
	}
	var walked string
	err = walkMemory(ctx, fs, func(name string, fi memtool.FileInfo) error {
		if fi.IsRegular() {
			walked = name
			return errStopWalk
		}
		return nil
	})
	if err != errStopWalk || walked != "b/c/deep.md" {
		t.Fatalf("walkMemory's first file: %q, %v", walked, err)
	}
	if got := firstListed(ctx, fs, "", 0); got != walked {
		t.Errorf("firstListed on the file store: %q, want %q", got, walked)
	}
	if got := firstListed(ctx, mem, "", 0); got != "" {
		t.Errorf("firstListed on a store without NameLister: %q, want \"\"", got)
	}
}
