package objectstore_test

import (
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/objectstore/s3test"
)

// TestUnchangedUpdate: an Update whose fn returns the old content writes
// no object, on any bucket: the file's object on a file bucket keeps its
// inode, and an S3 server gets no PUT.
func TestUnchangedUpdate(t *testing.T) {
	t.Run("fileblob", func(t *testing.T) {
		dir := t.TempDir()
		storeops.CheckUnchangedUpdate(t, newStore(t, fileBucket(dir), ""), "f", func() any {
			fi, err := os.Stat(filepath.Join(dir, "f", "f"))
			if err != nil {
				t.Fatal(err)
			}
			return fi.Sys().(*syscall.Stat_t).Ino
		})
	})
	t.Run("s3", func(t *testing.T) {
		var puts atomic.Int64
		srv := s3Server{s3test.Start(t, &s3test.Options{Before: func(r *http.Request) {
			if r.Method == http.MethodPut {
				puts.Add(1)
			}
		}})}
		storeops.CheckUnchangedUpdate(t, srv.open(t, srv.newBucket(t), nil), "f", func() any { return puts.Load() })
	})
}
