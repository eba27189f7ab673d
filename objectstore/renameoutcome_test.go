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

// A rename goes on after its context ends, once it deletes sources: what
// it then answers says what it did, never the cancellation, which Memory
// reads as "nothing was changed".

// A file rename whose context ends while it deletes the source, and which
// then keeps the file at both names (another process edited the source
// and replaced the copy), answers the refusal that says so, not the
// cancellation.
func TestS3RenameRefusalOutlivesCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old.txt", act: func(theirs memtool.Store) error {
		cancel()
		return errors.Join(appendText(theirs, "old.txt", " edited"), theirs.WriteFile(context.Background(), "new.txt", []byte("replaced"), memtool.Replace))
	}}
	mine := raceStore(t, il)
	write(t, mine, "old.txt", "v1")
	err := mine.Rename(ctx, "old.txt", "new.txt")
	if e := il.err(t); e != nil {
		t.Fatalf("the other process's writes: %v", e)
	}
	checkContents(t, mine, map[string]string{"old.txt": "v1 edited", "new.txt": "replaced"})
	if ref := memtool.Refusal(""); !errors.As(err, &ref) || errors.Is(err, context.Canceled) {
		t.Errorf("Rename = %v, want the refusal that keeps both, not the cancellation", err)
	}
}

// Through Memory: a directory rename whose context ends while it deletes
// the sources, and which leaves old/b.txt behind (another process keeps
// editing it), tells the model what moved and what stayed, not that
// nothing was changed.
func TestS3DirRenameRefusalOutlivesCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var armed atomic.Bool
	il := &interleaving{method: http.MethodDelete, suffix: "/f/old/b.txt", always: true, act: func(theirs memtool.Store) error {
		if !armed.Load() {
			return nil
		}
		cancel()
		return appendText(theirs, "old/b.txt", "+")
	}}
	mine := raceStore(t, il)
	mkdir(t, mine, "old")
	write(t, mine, "old/a.txt", "a")
	write(t, mine, "old/b.txt", "b")
	armed.Store(true)
	res := memtool.New(mine, nil).Execute(ctx, &memtool.Rename{OldPath: "/memories/old", NewPath: "/memories/new"})
	armed.Store(false)
	if e := il.err(t); e != nil {
		t.Fatalf("the other process's edits: %v", e)
	}
	checkContents(t, mine, map[string]string{"old/a.txt": "(missing)", "new/a.txt": "a"})
	if !res.IsError || strings.Contains(res.Text, "nothing was changed") || !strings.Contains(res.Text, "/memories/old/b.txt") {
		t.Errorf("the model is told %q (IsError %v), want the refusal naming /memories/old/b.txt", res.Text, res.IsError)
	}
}

// A directory rename whose context ends while it deletes the sources,
// and which then fails to list the source again (a plain service error),
// answers memtool.ErrOutcomeUnknown: a.txt has moved.
func TestS3DirRenameFailureAfterDeletesIsOutcomeUnknown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deleted atomic.Bool
	srv := startS3With(t, &s3test.Options{
		Before: func(r *http.Request) {
			if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/old/a.txt") {
				cancel()
				deleted.Store(true)
			}
		},
		Fail: func(r *http.Request) string {
			if deleted.Load() && r.URL.Query().Has("list-type") && strings.HasSuffix(r.URL.Query().Get("prefix"), "f/old/") {
				return "NotImplemented" // not sent again
			}
			return ""
		},
	})
	mine := srv.open(t, srv.newBucket(t), nil)
	mkdir(t, mine, "old")
	write(t, mine, "old/a.txt", "a")
	err := mine.Rename(ctx, "old", "new")
	deleted.Store(false)
	checkContents(t, mine, map[string]string{"old/a.txt": "(missing)", "new/a.txt": "a"})
	if !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("Rename = %v, want memtool.ErrOutcomeUnknown", err)
	}
}
