package objectstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// heldPut holds, once armed, the first PUT to a key ending in suffix: the
// server reads the whole request, cancels the change's context (its
// client gives up, not knowing whether the write is made) and serves it
// only once release is called, after the change has answered.
type heldPut struct {
	suffix      string
	armed, held atomic.Bool
	ctx         context.Context
	cancel      func()
	releaseOnce sync.Once
	releaseCh   chan struct{}
}

func newHeldPut(t *testing.T, suffix string) *heldPut {
	h := &heldPut{suffix: suffix, releaseCh: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	t.Cleanup(h.cancel)
	return h
}

func (h *heldPut) options() *s3test.Options {
	return &s3test.Options{Before: func(r *http.Request) {
		if h.armed.Load() && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, h.suffix) && h.held.CompareAndSwap(false, true) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.cancel()
			<-h.releaseCh
		}
	}}
}

// release lets the held PUT be served (registered as a cleanup too, so
// that a failed test does not leave the server waiting).
func (h *heldPut) release() { h.releaseOnce.Do(func() { close(h.releaseCh) }) }

// checkNoOrphan renames the directory old (a.txt, b.txt) to new while the
// copy of old/b.txt is held, lets that copy land after Rename answered,
// and wants: Rename's error wraps memtool.ErrOutcomeUnknown, the source is
// whole, and the late copy is in a directory (new), not a file hidden
// under a name that shows nothing until that directory is made again.
func checkNoOrphan(t *testing.T, s *objectstore.Store, h *heldPut) {
	t.Helper()
	t.Cleanup(h.release)
	ctx := context.Background()
	files := map[string]string{"old/a.txt": "a", "old/b.txt": "b"}
	mkdir(t, s, "old")
	write(t, s, "old/a.txt", "a")
	write(t, s, "old/b.txt", "b")
	h.armed.Store(true)
	err := s.Rename(h.ctx, "old", "new")
	h.release()
	if !h.held.Load() {
		t.Fatalf("the copy of old/b.txt was never sent (Rename = %v)", err)
	}
	if err == nil || !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("Rename = %v, want ErrOutcomeUnknown", err)
	}
	// Wait for the held copy to be served.
	for content(t, s, "new/b.txt") != "b" {
	}
	checkContents(t, s, files)
	if fi, err := s.Stat(ctx, "new"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(new) = %v, %v with new/b.txt there: a file hidden without its directory", fi, err)
		if err := s.Mkdir(ctx, "new"); err == nil {
			if _, err := s.ReadFile(ctx, "new/b.txt", 1<<20); err == nil {
				t.Errorf("Mkdir(new) made a new directory that already holds b.txt")
			}
		}
	}
}

// A directory rename on S3 whose copy of a file may still be made (its
// context ended while the write was out) keeps the destination's marker:
// the copy, landing later, is never left without its directory.
func TestS3DirRenameCopyOutcomeUnknown(t *testing.T) {
	h := newHeldPut(t, "/f/new/b.txt")
	srv := startS3With(t, h.options())
	s := srv.open(t, srv.newBucket(t), nil)
	checkNoOrphan(t, s, h)
}

// refuseCopyAndUndo returns server options that, once armed, refuse (403)
// the PUT of the copy new/b.txt and the DELETE of the copy new/a.txt: a
// directory rename of old fails, and cannot take back its copy.
func refuseCopyAndUndo(armed *atomic.Bool) *s3test.Options {
	return &s3test.Options{Fail: func(r *http.Request) string {
		switch {
		case !armed.Load():
		case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/f/new/b.txt"),
			r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/new/a.txt"):
			return "AccessDenied"
		}
		return ""
	}}
}

// checkUndoRefused renames the directory old (a.txt, b.txt) to new on a
// server started with refuseCopyAndUndo, and wants an error that says
// what the rename did: a plain failure (which Memory reads as "nothing
// changed") only if new does not exist.
func checkUndoRefused(t *testing.T, s *objectstore.Store, armed *atomic.Bool) {
	t.Helper()
	ctx := context.Background()
	files := map[string]string{"old/a.txt": "a", "old/b.txt": "b"}
	mkdir(t, s, "old")
	write(t, s, "old/a.txt", "a")
	write(t, s, "old/b.txt", "b")
	armed.Store(true)
	err := s.Rename(ctx, "old", "new")
	armed.Store(false)
	if err == nil {
		t.Fatal("Rename worked")
	}
	checkContents(t, s, files)
	if errors.Is(err, memtool.ErrOutcomeUnknown) {
		return
	}
	if fi, serr := s.Stat(ctx, "new"); !errors.Is(serr, memtool.ErrNotExist) {
		t.Errorf("Rename = %v (nothing changed), but Stat(new) = %v, %v", err, fi, serr)
	}
}

// A directory rename on S3 whose copy is refused, and whose undo of the
// copies is refused too, does not answer an error that says nothing
// changed while the new directory is there.
func TestS3DirRenameUndoRefused(t *testing.T) {
	armed := new(atomic.Bool)
	srv := startS3With(t, refuseCopyAndUndo(armed))
	checkUndoRefused(t, srv.open(t, srv.newBucket(t), nil), armed)
}

// A file rename on S3 whose check of the destination's directory fails
// (a 403 on its marker, once the copy is written), and whose undo of the
// copy is refused too, does not answer an error that says nothing
// changed while the copy is at the new name.
func TestS3RenameSettleAndUndoRefused(t *testing.T) {
	var armed atomic.Bool
	var heads atomic.Int32
	srv := startS3With(t, &s3test.Options{Fail: func(r *http.Request) string {
		switch {
		case !armed.Load():
		case r.Method == http.MethodHead && strings.HasSuffix(r.URL.Path, "/f/p/.memtool-dir"):
			if heads.Add(1) > 1 { // the parent's check before the copy passes
				return "AccessDenied"
			}
		case r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/f/p/new.txt"):
			return "AccessDenied"
		}
		return ""
	}})
	s := srv.open(t, srv.newBucket(t), nil)
	ctx := context.Background()
	mkdir(t, s, "p")
	write(t, s, "old.txt", "v1")
	armed.Store(true)
	err := s.Rename(ctx, "old.txt", "p/new.txt")
	armed.Store(false)
	if err == nil {
		t.Fatal("Rename worked")
	}
	checkContents(t, s, map[string]string{"old.txt": "v1"})
	if !errors.Is(err, memtool.ErrOutcomeUnknown) && content(t, s, "p/new.txt") != "(missing)" {
		t.Errorf("Rename = %v (nothing changed), with p/new.txt there", err)
	}
}
