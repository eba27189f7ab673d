package objectstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
)

// TestRenameOntoItself: a rename of an entry onto its own name finds
// something at the destination, as the Renamer contract says: ErrExist,
// and nothing changes (the resource API answers exists, 409, as over
// every other store, not a bad request).
func TestRenameOntoItself(t *testing.T) {
	ctx := context.Background()
	srv := startS3(t)
	stores := map[string]memtool.Store{
		"memblob":  newStore(t, memBucket, ""),
		"fileblob": newStore(t, fileBucket(t.TempDir()), ""),
		"s3":       srv.open(t, srv.newBucket(t), nil),
	}
	for kind, s := range stores {
		write(t, s, "a.txt", "a")
		mkdir(t, s, "d")
		write(t, s, "d/b.txt", "b")
		for _, name := range []string{"a.txt", "d", "d/b.txt"} {
			if err := s.(memtool.Renamer).Rename(ctx, name, name); !errors.Is(err, memtool.ErrExist) {
				t.Errorf("%s: Rename(%s, %s) = %v, want ErrExist", kind, name, name, err)
			}
		}
		checkContents(t, s, map[string]string{"a.txt": "a", "d/b.txt": "b"})
	}
}
