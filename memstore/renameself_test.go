package memstore_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// TestRenameOntoItself: a rename of an entry onto its own name finds
// something at the destination, as the Renamer contract says: ErrExist,
// and nothing changes (the resource API then answers that the name
// exists, not that a directory cannot move into itself). A missing name
// renamed onto itself is missing: ErrNotExist.
func TestRenameOntoItself(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if err := s.WriteFile(ctx, "a.txt", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := s.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "d/b.txt", []byte("b"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.txt", "d", "d/b.txt"} {
		if err := s.Rename(ctx, name, name); !errors.Is(err, memtool.ErrExist) {
			t.Errorf("Rename(%s, %s) = %v, want ErrExist", name, name, err)
		}
	}
	if err := s.Rename(ctx, "gone", "gone"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Rename(gone, gone) = %v, want ErrNotExist", err)
	}
	for name, want := range map[string]string{"a.txt": "a", "d/b.txt": "b"} {
		if got, err := s.ReadFile(ctx, name, 1<<20); err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v, want %q", name, got, err, want)
		}
	}
	// A directory still cannot move inside itself.
	if err := s.Rename(ctx, "d", "d/e"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Rename(d, d/e) = %v, want ErrInvalid", err)
	}
}
