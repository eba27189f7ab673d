package objectstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// loseFirstAnswer returns a store on a server that makes the first
// request with method to a key ending in suffix, and then answers 500
// InternalError, as S3 may after the change took effect.
func loseFirstAnswer(t *testing.T, method, suffix string) *objectstore.Store {
	t.Helper()
	var lost atomic.Bool
	srv := startS3With(t, &s3test.Options{LoseAnswer: func(r *http.Request) bool {
		return r.Method == method && strings.HasSuffix(r.URL.Path, suffix) && lost.CompareAndSwap(false, true)
	}})
	return srv.open(t, srv.newBucket(t), nil)
}

// A rename whose delete of the source was made but answered 500 (and so
// sent again, and answered 404) keeps the file: the 404 is its own
// delete's, not another process's, and the copy is the file now.
func TestS3RenameAfterLostDeleteAnswer(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		s := loseFirstAnswer(t, http.MethodDelete, "/f/old.txt")
		write(t, s, "old.txt", "v1")
		err := s.Rename(context.Background(), "old.txt", "new.txt")
		checkRenamed(t, s, err, "old.txt", "new.txt", map[string]string{"old.txt": "v1"})
		if err != nil {
			t.Errorf("Rename: %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		files := map[string]string{"old/a.txt": "a", "old/b.txt": "b"}
		s := loseFirstAnswer(t, http.MethodDelete, "/f/old/a.txt")
		mkdir(t, s, "old")
		for name, text := range files {
			write(t, s, name, text)
		}
		err := s.Rename(context.Background(), "old", "new")
		checkRenamed(t, s, err, "old", "new", files)
		if err != nil {
			t.Errorf("Rename: %v", err)
		}
	})
}

// An edit or a create whose write was made but answered 500 (and so sent
// again, and refused on its condition) is made once and answered success:
// the edit was not made again over itself, the create did not answer
// ErrExist for the file it made.
func TestS3WriteAfterLostPutAnswer(t *testing.T) {
	ctx := context.Background()
	t.Run("edit", func(t *testing.T) {
		var armed, lost atomic.Bool
		srv := startS3With(t, &s3test.Options{LoseAnswer: func(r *http.Request) bool {
			return armed.Load() && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/f/x.txt") && lost.CompareAndSwap(false, true)
		}})
		s := srv.open(t, srv.newBucket(t), nil)
		write(t, s, "x.txt", "v1")
		armed.Store(true)
		if err := appendText(s, "x.txt", "+"); err != nil {
			t.Errorf("Update: %v", err)
		}
		checkContents(t, s, map[string]string{"x.txt": "v1+"})
	})
	t.Run("create", func(t *testing.T) {
		s := loseFirstAnswer(t, http.MethodPut, "/f/x.txt")
		if err := s.WriteFile(ctx, "x.txt", []byte("v1"), memtool.CreateOnly); err != nil {
			t.Errorf("WriteFile: %v", err)
		}
		checkContents(t, s, map[string]string{"x.txt": "v1"})
	})
}

// A write cancelled while its request was out (the caller's deadline
// struck while S3 made it) is looked up: if S3 made it, it is a success,
// an edit made once; if S3 has not (yet) made it, it may still, and the
// error wraps memtool.ErrOutcomeUnknown, never only the deadline, which
// Memory would tell the model meant that nothing changed.
func TestS3WriteCancelledWhileOut(t *testing.T) {
	short := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	stalled := func(method string, armed *atomic.Bool) func(*http.Request) bool {
		return func(r *http.Request) bool {
			return armed.Load() && r.Method == method && strings.HasSuffix(r.URL.Path, "/f/x.txt")
		}
	}
	t.Run("made", func(t *testing.T) {
		var armed atomic.Bool
		srv := startS3With(t, &s3test.Options{StallAnswer: stalled(http.MethodPut, &armed)})
		s := srv.open(t, srv.newBucket(t), nil)
		write(t, s, "x.txt", "v1")
		armed.Store(true)
		if err := s.WriteFile(short(t), "x.txt", []byte("v2"), memtool.Replace); err != nil {
			t.Errorf("WriteFile made while its answer stalled: %v", err)
		}
		err := s.Update(short(t), "x.txt", 1<<20, func(old []byte) ([]byte, error) { return append(old, '+'), nil })
		if err != nil {
			t.Errorf("Update made while its answer stalled: %v", err)
		}
		checkContents(t, s, map[string]string{"x.txt": "v2+"})
	})
	t.Run("not made", func(t *testing.T) {
		var armed atomic.Bool
		// The request is read whole (so that the server sees the client
		// hang up), held until then, and not served.
		srv := startS3With(t, &s3test.Options{
			Before: func(r *http.Request) {
				if stalled(http.MethodPut, &armed)(r) {
					io.Copy(io.Discard, r.Body)
					<-r.Context().Done()
				}
			},
			Fail: func(r *http.Request) string {
				if stalled(http.MethodPut, &armed)(r) {
					return "InternalError"
				}
				return ""
			},
		})
		s := srv.open(t, srv.newBucket(t), nil)
		write(t, s, "x.txt", "v1")
		armed.Store(true)
		err := s.WriteFile(short(t), "x.txt", []byte("v2"), memtool.Replace)
		if !errors.Is(err, memtool.ErrOutcomeUnknown) {
			t.Errorf("WriteFile cancelled while out, not seen made: %v; want ErrOutcomeUnknown", err)
		}
		armed.Store(false)
		checkContents(t, s, map[string]string{"x.txt": "v1"})
	})
}
