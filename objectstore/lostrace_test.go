package objectstore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/objectstore/s3test"
)

// These tests lose S3's answer to a change that S3 made (the server makes
// it, then answers 500), and put another process's change to the same
// key right after: before the request is sent again, or before anything
// else this process sends about that key. A store that reads the answer
// to its second request as the answer to its first deletes or overwrites
// the other process's change, or makes its own twice.

// lostThen is a server that loses the answer to the first request with
// method to a key ending in suffix (once armed), and then, at the next
// request to that key, first runs act with another store of the bucket.
type lostThen struct {
	method, suffix string
	act            func(theirs memtool.Store) error

	armed, lost, fired atomic.Bool
	theirs             memtool.Store
	actErr             error
}

func (lt *lostThen) loseAnswer(r *http.Request) bool {
	return lt.armed.Load() && r.Method == lt.method && strings.HasSuffix(r.URL.Path, lt.suffix) && lt.lost.CompareAndSwap(false, true)
}

func (lt *lostThen) before(r *http.Request) {
	// Requests of the other store come here too, once fired is set.
	if lt.lost.Load() && strings.HasSuffix(r.URL.Path, lt.suffix) && lt.fired.CompareAndSwap(false, true) {
		lt.actErr = lt.act(lt.theirs)
	}
}

// start returns a store of a new bucket on a server that runs lt.
func (lt *lostThen) start(t *testing.T) *objectstore.Store {
	t.Helper()
	srv := startS3With(t, &s3test.Options{Before: lt.before, LoseAnswer: lt.loseAnswer})
	name := srv.newBucket(t)
	lt.theirs = srv.open(t, name, nil)
	return srv.open(t, name, nil)
}

// change arms lt, makes the change call (on the store start returned),
// and fails t unless its answer was lost and act then ran, and succeeded.
// It returns call's error.
func (lt *lostThen) change(t *testing.T, call func() error) error {
	t.Helper()
	lt.armed.Store(true)
	err := call()
	if !lt.fired.Load() {
		t.Fatalf("no request to …%s came after the lost answer", lt.suffix)
	}
	if lt.actErr != nil {
		t.Fatalf("the other process's change: %v", lt.actErr)
	}
	return err
}

// deleteThenCreate loses the answer to the delete of the file name, and
// then has the other process create it, holding theirs.
func deleteThenCreate(name, theirs string) *lostThen {
	return &lostThen{method: http.MethodDelete, suffix: "/f/" + name, act: func(s memtool.Store) error {
		return s.WriteFile(context.Background(), name, []byte(theirs), memtool.CreateOnly)
	}}
}

// wantMadeOrUnknown fails t unless err, of the call named call, is nil or
// says that the outcome is unknown.
func wantMadeOrUnknown(t *testing.T, call string, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("%s = %v, want success or ErrOutcomeUnknown", call, err)
	}
}

// A rename whose delete of the source was made, its answer lost, and a
// file then created at the old name by another process, leaves that file
// as it is: it is neither deleted (the request sent again matches it when
// it has the same bytes, and so the same ETag) nor copied over the
// renamed file (its other ETag fails the delete, as an edit of the source
// would). Rename succeeds, or says that its outcome is unknown.
func TestS3RenameLostDeleteThenCreate(t *testing.T) {
	for _, theirs := range []string{"theirs", "v1"} {
		t.Run(theirs, func(t *testing.T) {
			lt := deleteThenCreate("old.txt", theirs)
			s := lt.start(t)
			write(t, s, "old.txt", "v1")
			err := lt.change(t, func() error { return s.Rename(context.Background(), "old.txt", "new.txt") })
			wantMadeOrUnknown(t, "Rename", err)
			checkContents(t, s, map[string]string{"old.txt": theirs, "new.txt": "v1"})
			checkEditable(t, s, "old.txt", "new.txt")
		})
	}
}

// So in a directory: the file created at the old name stays, the renamed
// one is in the new directory, and Rename says that not all was moved.
func TestS3RenameDirLostDeleteThenCreate(t *testing.T) {
	lt := deleteThenCreate("old/a.txt", "theirs")
	s := lt.start(t)
	mkdir(t, s, "old")
	write(t, s, "old/a.txt", "a")
	write(t, s, "old/b.txt", "b")
	if err := lt.change(t, func() error { return s.Rename(context.Background(), "old", "new") }); err == nil {
		t.Error("Rename = nil, and a file is left under old")
	}
	checkContents(t, s, map[string]string{"old/a.txt": "theirs", "new/a.txt": "a", "new/b.txt": "b", "old/b.txt": "(missing)"})
	checkEditable(t, s, "old/a.txt", "new/a.txt", "new/b.txt")
}

// A removal whose delete was made, its answer lost, and a file then
// created at the name by another process, leaves that file.
func TestS3RemoveLostDeleteThenCreate(t *testing.T) {
	lt := deleteThenCreate("x.txt", "theirs")
	s := lt.start(t)
	write(t, s, "x.txt", "v1")
	err := lt.change(t, func() error { return s.Remove(context.Background(), "x.txt") })
	wantMadeOrUnknown(t, "Remove", err)
	checkContents(t, s, map[string]string{"x.txt": "theirs"})
}

// An edit whose write was made, its answer lost, and then edited again by
// another process, is made once: the write sent again fails its
// condition (the other edit changed the ETag), which is not "another
// writer got in first, start again".
func TestS3UpdateLostPutThenEdit(t *testing.T) {
	lt := &lostThen{method: http.MethodPut, suffix: "/f/x.txt", act: func(s memtool.Store) error {
		return appendText(s, "x.txt", "B")
	}}
	s := lt.start(t)
	write(t, s, "x.txt", "v1")
	err := lt.change(t, func() error { return appendText(s, "x.txt", "A") })
	wantMadeOrUnknown(t, "Update", err)
	checkContents(t, s, map[string]string{"x.txt": "v1AB"})
}

// A change made, whose answer was lost, and which cannot then be looked
// at (the server fails every HEAD of the key, or answers every DELETE
// 500), wraps memtool.ErrOutcomeUnknown, or succeeds: an error of its
// own would tell the model that nothing changed.
func TestS3LostAnswerNotConfirmed(t *testing.T) {
	ctx := context.Background()
	// failing returns a server that, once armed, loses the answer to the
	// first request with method to /f/x.txt, or to every one with always,
	// and answers 500 to every HEAD of it after that.
	failing := func(t *testing.T, method string, always bool) (*objectstore.Store, *atomic.Bool) {
		var armed, lost atomic.Bool
		isX := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/f/x.txt") }
		srv := startS3With(t, &s3test.Options{
			Fail: func(r *http.Request) string {
				if lost.Load() && r.Method == http.MethodHead && isX(r) {
					return "InternalError"
				}
				return ""
			},
			LoseAnswer: func(r *http.Request) bool {
				if !armed.Load() || r.Method != method || !isX(r) {
					return false
				}
				return lost.CompareAndSwap(false, true) || always
			},
		})
		s := srv.open(t, srv.newBucket(t), nil)
		write(t, s, "x.txt", "v1")
		armed.Store(true)
		return s, &armed
	}
	t.Run("edit", func(t *testing.T) {
		s, armed := failing(t, http.MethodPut, false)
		err := appendText(s, "x.txt", "A")
		armed.Store(false)
		wantMadeOrUnknown(t, "Update", err)
		checkContents(t, s, map[string]string{"x.txt": "v1A"})
	})
	t.Run("write", func(t *testing.T) {
		s, armed := failing(t, http.MethodPut, true)
		err := s.WriteFile(ctx, "x.txt", []byte("v2"), memtool.Replace)
		armed.Store(false)
		wantMadeOrUnknown(t, "WriteFile", err)
	})
	t.Run("remove", func(t *testing.T) {
		s, armed := failing(t, http.MethodDelete, true)
		err := s.Remove(ctx, "x.txt")
		armed.Store(false)
		wantMadeOrUnknown(t, "Remove", err)
	})
	t.Run("rename", func(t *testing.T) {
		s, armed := failing(t, http.MethodDelete, true)
		err := s.Rename(ctx, "x.txt", "y.txt")
		armed.Store(false)
		wantMadeOrUnknown(t, "Rename", err)
	})
}

// A write whose request was made, its answer lost, and the object then
// changed by another process, is not sent again over that change: a
// replace over the other process's edit of it, a create over its removal.
func TestS3WriteLostPutThenChange(t *testing.T) {
	ctx := context.Background()
	t.Run("replace", func(t *testing.T) {
		lt := &lostThen{method: http.MethodPut, suffix: "/f/x.txt", act: func(s memtool.Store) error {
			return appendText(s, "x.txt", "B")
		}}
		s := lt.start(t)
		write(t, s, "x.txt", "v1")
		err := lt.change(t, func() error { return s.WriteFile(ctx, "x.txt", []byte("v2"), memtool.Replace) })
		wantMadeOrUnknown(t, "WriteFile", err)
		checkContents(t, s, map[string]string{"x.txt": "v2B"})
	})
	t.Run("create", func(t *testing.T) {
		lt := &lostThen{method: http.MethodPut, suffix: "/f/x.txt", act: func(s memtool.Store) error {
			return s.Remove(ctx, "x.txt")
		}}
		s := lt.start(t)
		err := lt.change(t, func() error { return s.WriteFile(ctx, "x.txt", []byte("v1"), memtool.CreateOnly) })
		wantMadeOrUnknown(t, "WriteFile", err)
		checkContents(t, s, map[string]string{"x.txt": "(missing)"})
	})
}
