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

// Two processes remove one file (or empty directory) at once: the one
// that finds it gone after it saw it there answers memtool.ErrNotExist,
// which Memory tells the model as "does not exist", not the package's
// own not-found error, which it would report as an internal error.
func TestS3RemoveRacingRemove(t *testing.T) {
	for _, name := range []string{"x.txt", "d"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var heads atomic.Int32
			var armed, fired atomic.Bool
			var theirs memtool.Store
			var theirsErr error
			key := "/f/" + name
			if name == "d" {
				key += "/.memtool-dir"
			}
			srv := startS3With(t, &s3test.Options{Before: func(r *http.Request) {
				// Mine: HEAD #1 (Stat), HEAD #2 (before the DELETE): the
				// other process removes the entry just before #2.
				if armed.Load() && r.Method == http.MethodHead && strings.HasSuffix(r.URL.Path, key) && heads.Add(1) == 2 && fired.CompareAndSwap(false, true) {
					theirsErr = theirs.Remove(ctx, name)
				}
			}})
			bucket := srv.newBucket(t)
			theirs = srv.open(t, bucket, nil)
			mine := srv.open(t, bucket, nil)
			if name == "d" {
				mkdir(t, mine, name)
			} else {
				write(t, mine, name, "x")
			}
			if _, err := theirs.Stat(ctx, name); err != nil {
				t.Fatal(err)
			}
			armed.Store(true)
			err := mine.Remove(ctx, name)
			armed.Store(false)
			if !fired.Load() || theirsErr != nil {
				t.Fatalf("the other process's Remove did not come between: fired %v, %v", fired.Load(), theirsErr)
			}
			if !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("Remove = %v, want ErrNotExist", err)
			}
		})
	}
}
