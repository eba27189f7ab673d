package objectstore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
)

// cancelAt returns a store on a new bucket, and a context that is
// cancelled when the server receives a request with method to a key
// ending in suffix (the request itself is then served, as the server
// would once it has it).
func cancelAt(t *testing.T, method, suffix string) (*objectstore.Store, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	il := &interleaving{method: method, suffix: suffix, act: func(memtool.Store) error {
		cancel()
		return nil
	}}
	return raceStore(t, il), ctx
}

// checkRenamed wants the rename of from to to (of the files, name: text,
// under from) either done or not done at all, as Rename's err says, and
// every file editable where it is.
func checkRenamed(t *testing.T, s memtool.Store, err error, from, to string, files map[string]string) {
	t.Helper()
	want := map[string]string{}
	var kept []string
	for name, text := range files {
		moved := to + strings.TrimPrefix(name, from)
		if err == nil {
			want[name], want[moved] = "(missing)", text
			kept = append(kept, moved)
		} else {
			want[name], want[moved] = text, "(missing)"
			kept = append(kept, name)
		}
	}
	checkContents(t, s, want)
	checkEditable(t, s, kept...)
}

// A rename whose context is cancelled once it has begun deleting the
// sources is not left half done: the file is at one name, not both, and
// Rename says which.
func TestS3RenameCancelledWhileDeletingSource(t *testing.T) {
	files := map[string]string{"old.txt": "v1"}
	s, ctx := cancelAt(t, http.MethodDelete, "/f/old.txt")
	write(t, s, "old.txt", "v1")
	err := s.Rename(ctx, "old.txt", "new.txt")
	checkRenamed(t, s, err, "old.txt", "new.txt", files)
}

// A directory rename whose context is cancelled once it has begun
// deleting the sources is not left torn between the two directories.
func TestS3DirRenameCancelledWhileDeletingSources(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{"old/a.txt": "a", "old/b.txt": "b", "old/c.txt": "c"}
	s, cctx := cancelAt(t, http.MethodDelete, "/f/old/a.txt")
	mkdir(t, s, "old")
	for name, text := range files {
		write(t, s, name, text)
	}
	err := s.Rename(cctx, "old", "new")
	checkRenamed(t, s, err, "old", "new", files)
	gone, kept := "old", "new"
	if err != nil {
		gone, kept = kept, gone
	}
	if _, err := s.Stat(ctx, gone); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Stat(%s) = %v, want ErrNotExist", gone, err)
	}
	if fi, err := s.Stat(ctx, kept); err != nil || !fi.IsDir() {
		t.Errorf("Stat(%s) = %v, %v, want a directory", kept, fi, err)
	}
}
