//go:build gcs || azure

package objectstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// blobChanges are the changes of TestGocloudChangeAnswerLost: each makes
// a store with x.txt ("v1") and d/, and the request that the change
// sends (method, to a key ending in suffix).
var blobChanges = []struct {
	name, method, suffix string
	run                  func(ctx context.Context, s *objectstore.Store) error
	made                 map[string]string // the contents once made
}{
	{"replace", http.MethodPut, "/f/x.txt", func(ctx context.Context, s *objectstore.Store) error {
		return s.WriteFile(ctx, "x.txt", []byte("v2"), memtool.Replace)
	}, map[string]string{"x.txt": "v2"}},
	{"update", http.MethodPut, "/f/x.txt", func(ctx context.Context, s *objectstore.Store) error {
		return s.Update(ctx, "x.txt", 1<<20, func(old []byte) ([]byte, error) { return append(old, '+'), nil })
	}, map[string]string{"x.txt": "v1+"}},
	{"remove", http.MethodDelete, "/f/x.txt", func(ctx context.Context, s *objectstore.Store) error {
		return s.Remove(ctx, "x.txt")
	}, map[string]string{"x.txt": "(missing)"}},
	{"mkdir", http.MethodPut, "/f/d/e/.memtool-dir", func(ctx context.Context, s *objectstore.Store) error {
		return s.Mkdir(ctx, "d/e")
	}, nil},
}

// blobSetup fills a gocloud store for blobChanges.
func blobSetup(t *testing.T, s *objectstore.Store) {
	t.Helper()
	write(t, s, "x.txt", "v1")
	mkdir(t, s, "d")
}

// checkMade fails t unless the change (made on the server) either
// answered success or an error wrapping memtool.ErrOutcomeUnknown, never
// one that Memory reads as "nothing was changed"; it waits until the
// server has made it.
func checkMade(t *testing.T, s *objectstore.Store, err error, made map[string]string, dir bool) {
	t.Helper()
	if err != nil && !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("change made on the server answered %v, not ErrOutcomeUnknown", err)
	}
	// The request is served whatever its client sees: wait for it (a
	// cancelled one may be served after the change has answered).
	for name, text := range made {
		for content(t, s, name) != text {
		}
	}
	if dir {
		for {
			if _, err := s.Stat(context.Background(), "d/e"); err == nil {
				break
			}
		}
		if fi, err := s.Stat(context.Background(), "d/e"); err != nil || !fi.IsDir() {
			t.Errorf("Stat(d/e) = %v, %v after the mkdir was made", fi, err)
		}
	}
}

// A Replace write, an edit, a removal or a mkdir on a gocloud bucket that
// the service made, but whose every answer was lost (a 500 to each of the
// client's attempts), or whose context ended while its request was out,
// does not answer an error that says nothing changed.
func TestGocloudChangeAnswerLost(t *testing.T) {
	for _, c := range blobChanges {
		matches := func(armed *atomic.Bool, r *http.Request) bool {
			return armed.Load() && r.Method == c.method && strings.HasSuffix(r.URL.Path, c.suffix)
		}
		t.Run(c.name+"/500", func(t *testing.T) {
			armed := new(atomic.Bool)
			s := gocloudStore(t, &s3test.Options{LoseAnswer: func(r *http.Request) bool { return matches(armed, r) }})
			blobSetup(t, s)
			armed.Store(true)
			err := c.run(context.Background(), s)
			armed.Store(false)
			checkMade(t, s, err, c.made, c.made == nil)
		})
		t.Run(c.name+"/cancelled", func(t *testing.T) {
			armed := new(atomic.Bool)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			s := gocloudStore(t, &s3test.Options{
				Before: func(r *http.Request) {
					if matches(armed, r) {
						// The whole request is in: it is served.
						body, _ := io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(body))
						cancel()
					}
				},
				StallAnswer: func(r *http.Request) bool { return matches(armed, r) },
			})
			blobSetup(t, s)
			armed.Store(true)
			err := c.run(ctx, s)
			armed.Store(false)
			checkMade(t, s, err, c.made, c.made == nil)
		})
	}
}

// A change the service refuses (a 403) changed nothing, and says so: it
// is not taken for one whose answer was lost.
func TestGocloudChangeRefused(t *testing.T) {
	for _, c := range blobChanges {
		t.Run(c.name, func(t *testing.T) {
			var armed atomic.Bool
			s := gocloudStore(t, &s3test.Options{Fail: func(r *http.Request) string {
				if armed.Load() && r.Method == c.method && strings.HasSuffix(r.URL.Path, c.suffix) {
					return "AccessDenied"
				}
				return ""
			}})
			blobSetup(t, s)
			armed.Store(true)
			err := c.run(context.Background(), s)
			armed.Store(false)
			if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("refused change answered %v, want a plain failure", err)
			}
			checkContents(t, s, map[string]string{"x.txt": "v1"})
			if _, err := s.Stat(context.Background(), "d/e"); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("Stat(d/e) = %v, want ErrNotExist", err)
			}
		})
	}
}

// A file rename whose context ends while the delete of its source is out
// keeps the copy: the delete, still to come, may remove the source after
// Rename has answered, and the file must then be at its new name, not
// gone from both.
func TestGocloudRenameSourceDeleteLate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	release := make(chan struct{})
	var armed, held atomic.Bool
	s := gocloudStore(t, &s3test.Options{Before: func(r *http.Request) {
		if armed.Load() && r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/old.txt") && held.CompareAndSwap(false, true) {
			cancel()
			<-release // served once Rename has answered
		}
	}})
	write(t, s, "old.txt", "v1")
	armed.Store(true)
	err := s.Rename(ctx, "old.txt", "new.txt")
	close(release)
	if err == nil || !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("Rename = %v, want ErrOutcomeUnknown", err)
	}
	if !held.Load() {
		t.Fatal("the source's delete was never sent")
	}
	// Wait for the held delete to be served.
	for content(t, s, "old.txt") != "(missing)" {
	}
	checkContents(t, s, map[string]string{"new.txt": "v1"})
}
