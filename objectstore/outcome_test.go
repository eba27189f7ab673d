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

// A change that fails after S3 made (part of) it wraps
// memtool.ErrOutcomeUnknown: any other error tells Memory, and so the
// model, that nothing changed.

// A create whose context ends once its object is written (while it checks
// that its directory is still there) has made the file.
func TestS3CreateCancelledAfterWrite(t *testing.T) {
	for _, op := range []string{"write", "mkdir"} {
		t.Run(op, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			var written atomic.Bool
			srv := startS3With(t, &s3test.Options{Before: func(r *http.Request) {
				switch {
				case r.Method == http.MethodPut && (strings.HasSuffix(r.URL.Path, "/f/d/x") || strings.HasSuffix(r.URL.Path, "/f/d/x/.memtool-dir")):
					written.Store(true)
				case written.Load() && r.Method == http.MethodHead && strings.HasSuffix(r.URL.Path, "/f/d/.memtool-dir"):
					cancel()
					<-r.Context().Done() // the client gave up: no answer
				}
			}})
			s := srv.open(t, srv.newBucket(t), nil)
			mkdir(t, s, "d")
			var err error
			if op == "write" {
				err = s.WriteFile(ctx, "d/x", []byte("v1"), memtool.CreateOnly)
			} else {
				err = s.Mkdir(ctx, "d/x")
			}
			_, serr := s.Stat(context.Background(), "d/x")
			if err != nil && !errors.Is(err, memtool.ErrOutcomeUnknown) && serr == nil {
				t.Errorf("%s = %v, not ErrOutcomeUnknown, and d/x was made", op, err)
			}
		})
	}
}

// A removal whose context ends while its DELETE is out (S3 deletes, the
// answer does not come) may have removed the file.
func TestS3RemoveCancelledWhileOut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	isDelete := func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/x")
	}
	srv := startS3With(t, &s3test.Options{
		Before: func(r *http.Request) {
			if isDelete(r) {
				cancel()
			}
		},
		StallAnswer: isDelete,
	})
	s := srv.open(t, srv.newBucket(t), nil)
	write(t, s, "x", "v1")
	err := s.Remove(ctx, "x")
	_, serr := s.Stat(context.Background(), "x")
	if err != nil && !errors.Is(err, memtool.ErrOutcomeUnknown) && !errors.Is(serr, memtool.ErrNotExist) {
		t.Fatalf("Stat after a failed Remove: %v", serr)
	}
	if err != nil && !errors.Is(err, memtool.ErrOutcomeUnknown) && errors.Is(serr, memtool.ErrNotExist) {
		t.Errorf("Remove = %v, not ErrOutcomeUnknown, and x was removed", err)
	}
}

// A RemoveAll whose context ends once it has deleted some of the tree
// has changed it.
func TestS3RemoveAllCancelledPartway(t *testing.T) {
	s, ctx := cancelAt(t, http.MethodDelete, "/f/d/a")
	mkdir(t, s, "d")
	write(t, s, "d/a", "a")
	write(t, s, "d/b", "b")
	err := s.RemoveAll(ctx, "d")
	if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		return
	}
	checkContents(t, s, map[string]string{"d/a": "a", "d/b": "b"})
	if t.Failed() {
		t.Errorf("RemoveAll = %v, not ErrOutcomeUnknown, and part of d was removed", err)
	}
}
