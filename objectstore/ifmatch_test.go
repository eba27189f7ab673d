package objectstore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore/s3test"
)

// TestS3UpdateOfDeletedFile: an edit whose conditional write finds the
// file deleted by another process since it read it answers ErrNotExist,
// whether the service says so with 412 (gofakes3) or with 404 NoSuchKey,
// and writes nothing.
func TestS3UpdateOfDeletedFile(t *testing.T) {
	for _, missing404 := range []bool{false, true} {
		name := "412"
		if missing404 {
			name = "404"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var armed atomic.Bool
			var theirs atomic.Pointer[memtool.Store]
			var removeErr atomic.Pointer[error]
			srv := startS3With(t, &s3test.Options{MissingOnIfMatch: missing404, Before: func(r *http.Request) {
				if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/a.md") && armed.CompareAndSwap(true, false) {
					err := (*theirs.Load()).Remove(ctx, "a.md")
					removeErr.Store(&err)
				}
			}})
			bucket := srv.newBucket(t)
			s := srv.open(t, bucket, nil)
			other := memtool.Store(srv.open(t, bucket, nil))
			theirs.Store(&other)
			write(t, s, "a.md", "one\n")
			armed.Store(true)
			err := s.Update(ctx, "a.md", 1<<20, func(old []byte) ([]byte, error) {
				return append(old, "two\n"...), nil
			})
			if p := removeErr.Load(); p == nil || *p != nil {
				t.Fatalf("the other process's remove did not run before the write: %v", p)
			}
			if !errors.Is(err, memtool.ErrNotExist) {
				t.Fatalf("Update of a file deleted meanwhile: %v, want ErrNotExist", err)
			}
			if got := content(t, s, "a.md"); got != "(missing)" {
				t.Fatalf("a.md after the refused edit: %q", got)
			}
		})
	}
}
