//go:build gcs || azure

package objectstore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob/s3blob"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// gocloudStore returns a store on a gocloud.dev/blob bucket (New without
// Options.S3Bucket: the driver-neutral code that gs:// and azblob:// stores
// run), here gocloud's S3 driver on the test's S3 server started with
// opts, whose clients (as GCS's and Azure's do) send a request again
// after a 500.
func gocloudStore(t *testing.T, opts *s3test.Options) *objectstore.Store {
	t.Helper()
	srv := startS3With(t, opts)
	name := srv.newBucket(t)
	b, err := s3blob.OpenBucket(context.Background(), srv.Client(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := objectstore.New(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// loseOnce makes the first request with method to a key ending in suffix,
// once armed, and answers 500.
func loseOnce(method, suffix string, armed *atomic.Bool) func(*http.Request) bool {
	var lost atomic.Bool
	return func(r *http.Request) bool {
		return armed.Load() && r.Method == method && strings.HasSuffix(r.URL.Path, suffix) && lost.CompareAndSwap(false, true)
	}
}

// A create whose write was made but answered 500, and which the driver's
// client sent again (refused then on its if-not-exists), is the create
// that made the file: it does not answer ErrExist, and a rename whose
// copy was made so does not answer "the destination exists" with the
// file at both names.
func TestGocloudCreateAfterLostAnswer(t *testing.T) {
	ctx := context.Background()
	t.Run("create", func(t *testing.T) {
		armed := new(atomic.Bool)
		s := gocloudStore(t, &s3test.Options{LoseAnswer: loseOnce(http.MethodPut, "/f/x.txt", armed)})
		armed.Store(true)
		if err := s.WriteFile(ctx, "x.txt", []byte("v1"), memtool.CreateOnly); err != nil {
			t.Errorf("WriteFile: %v", err)
		}
		checkContents(t, s, map[string]string{"x.txt": "v1"})
	})
	t.Run("rename", func(t *testing.T) {
		armed := new(atomic.Bool)
		s := gocloudStore(t, &s3test.Options{LoseAnswer: loseOnce(http.MethodPut, "/f/new.txt", armed)})
		write(t, s, "old.txt", "v1")
		armed.Store(true)
		err := s.Rename(ctx, "old.txt", "new.txt")
		checkRenamed(t, s, err, "old.txt", "new.txt", map[string]string{"old.txt": "v1"})
		if err != nil {
			t.Errorf("Rename: %v", err)
		}
	})
}

// A rename whose delete of the source fails (refused by the service)
// leaves the file at its old name only, and says it failed: it never
// leaves a copy behind under an error that says nothing changed.
func TestGocloudRenameSourceDeleteRefused(t *testing.T) {
	for _, code := range []string{"AccessDenied", "SlowDown"} {
		t.Run(code, func(t *testing.T) {
			var armed atomic.Bool
			s := gocloudStore(t, &s3test.Options{Fail: func(r *http.Request) string {
				if armed.Load() && r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/old.txt") {
					return code
				}
				return ""
			}})
			write(t, s, "old.txt", "v1")
			armed.Store(true)
			err := s.Rename(context.Background(), "old.txt", "new.txt")
			if err == nil {
				t.Fatal("Rename worked")
			}
			armed.Store(false)
			if errors.Is(err, memtool.ErrOutcomeUnknown) {
				return // it may say it does not know
			}
			checkRenamed(t, s, err, "old.txt", "new.txt", map[string]string{"old.txt": "v1"})
		})
	}
	t.Run("directory", func(t *testing.T) {
		files := map[string]string{"old/a.txt": "a", "old/b.txt": "b"}
		var armed atomic.Bool
		s := gocloudStore(t, &s3test.Options{Fail: func(r *http.Request) string {
			if armed.Load() && r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/old/a.txt") {
				return "AccessDenied"
			}
			return ""
		}})
		mkdir(t, s, "old")
		for name, text := range files {
			write(t, s, name, text)
		}
		armed.Store(true)
		err := s.Rename(context.Background(), "old", "new")
		if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
			t.Fatalf("Rename = %v, want a failure that changed nothing", err)
		}
		armed.Store(false)
		checkRenamed(t, s, err, "old", "new", files)
		if _, err := s.Stat(context.Background(), "new"); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("Stat(new) = %v, want ErrNotExist", err)
		}
	})
}

// A delete the service answers "not found" while the object is still
// there (gocloud's GCS driver reads a 403, as a retention policy or an
// object hold gives, as NotFound) is not taken for a file someone else
// removed: Remove does not answer ErrNotExist, and RemoveAll does not
// answer success, with the file still there.
func TestGocloudDeleteNotFoundButThere(t *testing.T) {
	ctx := context.Background()
	var armed atomic.Bool
	s := gocloudStore(t, &s3test.Options{Fail: func(r *http.Request) string {
		if armed.Load() && r.Method == http.MethodDelete {
			return "NoSuchKey"
		}
		return ""
	}})
	mkdir(t, s, "d")
	write(t, s, "d/x.txt", "v1")
	armed.Store(true)
	if err := s.Remove(ctx, "d/x.txt"); err == nil || errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Remove = %v, want a failure other than ErrNotExist", err)
	}
	if err := s.RemoveAll(ctx, "d"); err == nil {
		t.Errorf("RemoveAll worked")
	}
	checkContents(t, s, map[string]string{"d/x.txt": "v1"})
}
