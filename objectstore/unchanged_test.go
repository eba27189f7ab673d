package objectstore_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore/s3test"
)

// TestUnchangedUpdate: an Update whose fn returns the old content writes
// no object, on any bucket (the file's object on a file bucket keeps its
// inode; an S3 server gets no PUT); one that changes it writes.
func TestUnchangedUpdate(t *testing.T) {
	ctx := context.Background()
	same := func(old []byte) ([]byte, error) { return old, nil }
	changed := func(old []byte) ([]byte, error) { return append(old, '!'), nil }

	t.Run("fileblob", func(t *testing.T) {
		dir := t.TempDir()
		s := newStore(t, fileBucket(t, dir), nil)
		if err := s.WriteFile(ctx, "f", []byte("text"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		inode := func() uint64 {
			fi, err := os.Stat(filepath.Join(dir, "f", "f"))
			if err != nil {
				t.Fatal(err)
			}
			return fi.Sys().(*syscall.Stat_t).Ino
		}
		before := inode()
		if err := s.Update(ctx, "f", 100, same); err != nil {
			t.Fatal(err)
		}
		if inode() != before {
			t.Errorf("an Update to the same content wrote the object")
		}
		if err := s.Update(ctx, "f", 100, changed); err != nil {
			t.Fatal(err)
		}
		if inode() == before {
			t.Errorf("an Update to new content did not write the object")
		}
	})

	t.Run("s3", func(t *testing.T) {
		var puts atomic.Int64
		srv := s3Server{s3test.Start(t, &s3test.Options{Before: func(r *http.Request) {
			if r.Method == http.MethodPut {
				puts.Add(1)
			}
		}})}
		s := srv.open(t, srv.newBucket(t), nil)
		if err := s.WriteFile(ctx, "f", []byte("text"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		before := puts.Load()
		if err := s.Update(ctx, "f", 100, same); err != nil {
			t.Fatal(err)
		}
		if n := puts.Load() - before; n != 0 {
			t.Errorf("an Update to the same content sent %d PUTs, want none", n)
		}
		if err := s.Update(ctx, "f", 100, changed); err != nil {
			t.Fatal(err)
		}
		if puts.Load() == before {
			t.Errorf("an Update to new content sent no PUT")
		}
	})
}
