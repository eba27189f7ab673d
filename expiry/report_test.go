package expiry_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/internal/testclock"
)

// trashHooked is a store that calls before ahead of each removal of an
// entry in the trash (as a purge makes them), and readIndex ahead of
// each read of the access index; either may fail the call.
type trashHooked struct {
	memtool.Store
	before    func(name string) error
	readIndex func() error
}

func (h *trashHooked) hook(name string) error {
	if h.before != nil && strings.HasPrefix(name, expiry.TrashName+"/") {
		return h.before(name)
	}
	return nil
}

func (h *trashHooked) Remove(ctx context.Context, name string) error {
	if err := h.hook(name); err != nil {
		return err
	}
	return h.Store.Remove(ctx, name)
}

func (h *trashHooked) RemoveAll(ctx context.Context, name string) error {
	if err := h.hook(name); err != nil {
		return err
	}
	return memtool.ForwardRemoveAll(ctx, h.Store, name)
}

func (h *trashHooked) Rename(ctx context.Context, oldname, newname string) error {
	return memtool.ForwardRename(ctx, h.Store, oldname, newname)
}

func (h *trashHooked) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if name == expiry.IndexName && h.readIndex != nil {
		if err := h.readIndex(); err != nil {
			return nil, err
		}
	}
	return h.Store.ReadFile(ctx, name, limit)
}

// dueOne makes a.md through the wrapper and returns the clock 31 days
// later, when a.md is due.
func dueOne(t *testing.T, inner memtool.Store) *testclock.Clock {
	t.Helper()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	must.Succeed(t, s.WriteFile(context.Background(), "a.md", []byte("alpha"), memtool.CreateOnly))
	clk.Add(31 * 24 * time.Hour)
	return clk
}

// expireOne makes a.md, expires it in a run 31 days later, and returns
// the clock at that run.
func expireOne(t *testing.T, inner memtool.Store) *testclock.Clock {
	t.Helper()
	ctx := context.Background()
	clk := dueOne(t, inner)
	if rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}); err != nil || len(rep.Expired) != 1 {
		t.Fatalf("gc: %+v, %v", rep, err)
	}
	return clk
}

var errHooked = errors.New("injected failure")

// TestFailedPurgeReportsNothingPurged: a purge that fails leaves the
// batch in the trash, and the report must not list it as purged (memtool
// gc prints every purged path, then the error).
func TestFailedPurgeReportsNothingPurged(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := expireOne(t, inner)
		clk.Add(8 * 24 * time.Hour)
		h := &trashHooked{Store: inner, before: func(string) error { return errHooked }}
		rep, err := expiry.Collect(ctx, h, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if !errors.Is(err, errHooked) {
			t.Errorf("gc with the purge failing: %v", err)
		}
		trash, terr := expiry.Trash(ctx, inner)
		if terr != nil || len(trash) != 1 {
			t.Fatalf("trash after the failed purge: %+v, %v", trash, terr)
		}
		if len(rep.Purged) != 0 {
			t.Errorf("gc reports %+v purged; the trash still holds %+v", rep.Purged, trash)
		}
	})
}

// TestFailedIndexReadReportsNothingExpired: a run that cannot read the
// index again before its moves moves nothing, and must not report the
// files it found due as expired.
func TestFailedIndexReadReportsNothingExpired(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := dueOne(t, inner)
		var reads atomic.Int32
		h := &trashHooked{Store: inner, readIndex: func() error {
			if reads.Add(1) == 2 {
				return errHooked
			}
			return nil
		}}
		rep, err := expiry.Collect(ctx, h, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if !errors.Is(err, errHooked) {
			t.Errorf("gc with the index unreadable: %v", err)
		}
		if _, serr := inner.Stat(ctx, "a.md"); serr != nil {
			t.Fatalf("a.md: %v", serr)
		}
		if len(rep.Expired) != 0 {
			t.Errorf("gc reports %+v expired; a.md is in place", rep.Expired)
		}
	})
}

// TestConcurrentPurges: two runs at once (two processes) both find the
// same batch past its grace; the one that removes it second finds it
// gone, which is what it meant to do: no error.
func TestConcurrentPurges(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := expireOne(t, inner)
		clk.Add(8 * 24 * time.Hour)
		opts := expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}
		var once atomic.Bool
		h := &trashHooked{Store: inner, before: func(string) error {
			if once.CompareAndSwap(false, true) {
				if rep, err := expiry.Collect(ctx, inner, opts); err != nil || len(rep.Purged) != 1 {
					t.Errorf("the other gc: %+v, %v", rep, err)
				}
			}
			return nil
		}}
		if _, err := expiry.Collect(ctx, h, opts); err != nil {
			t.Errorf("gc purging a batch another gc purged meanwhile: %v", err)
		}
		if trash, err := expiry.Trash(ctx, inner); err != nil || len(trash) != 0 {
			t.Errorf("trash: %+v, %v", trash, err)
		}
	})
}

// TestRestoreDuringCollect: a file restored (memtool restore) while the
// run that moved it is still going is used, and back: the run, which
// then finds it used and has nothing to put back, succeeds and does not
// report it expired.
func TestRestoreDuringCollect(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := dueOne(t, inner)
		h := &renameHooked{Store: inner}
		h.after = func(oldname, _ string) {
			if oldname == "a.md" {
				if _, err := expiry.Restore(ctx, inner, "/memories/a.md", clk.Now()); err != nil {
					t.Errorf("restore during gc: %v", err)
				}
			}
		}
		rep, err := expiry.Collect(ctx, h, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if err != nil {
			t.Errorf("gc: %v", err)
		}
		if len(rep.Expired) != 0 {
			t.Errorf("gc reports %+v expired; a.md was restored", rep.Expired)
		}
		if got, err := inner.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "alpha" {
			t.Errorf("a.md: %q, %v", got, err)
		}
	})
}
