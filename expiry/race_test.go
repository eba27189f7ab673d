package expiry_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/memstore"
)

// hooked is a store that runs a hook once, at the first rename (before it)
// or at the first write of a file (after it).
type hooked struct {
	memtool.Store
	once         sync.Once
	beforeRename func()
	afterWrite   func()
}

func (h *hooked) Rename(ctx context.Context, oldname, newname string) error {
	if h.beforeRename != nil {
		h.once.Do(h.beforeRename)
	}
	return memtool.ForwardRename(ctx, h.Store, oldname, newname)
}

func (h *hooked) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	err := h.Store.WriteFile(ctx, name, data, mode)
	if err == nil && h.afterWrite != nil && !strings.HasPrefix(name, ".memtool") {
		h.once.Do(h.afterWrite)
	}
	return err
}

// TestCollectSparesConcurrentWrite: a file that is due when Collect reads
// the index, and is then written through the wrapper before Collect moves
// it, was used just now: it must stay, with what was written.
func TestCollectSparesConcurrentWrite(t *testing.T) {
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	inner := memstore.New()
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	if err := s.WriteFile(ctx, "a.md", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	clk.Add(31 * 24 * time.Hour)
	h := &hooked{Store: inner}
	h.beforeRename = func() {
		// The walk has found a.md due; the model writes it now.
		if err := s.WriteFile(ctx, "a.md", []byte("new"), memtool.Replace); err != nil {
			t.Error(err)
		}
	}
	rep, err := expiry.Collect(ctx, h, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := inner.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "new" {
		t.Errorf("after gc, a.md holds %q, %v; want the write that succeeded during gc, %q (report %+v)", got, err, "new", rep)
	}
	if len(rep.Expired) != 0 {
		t.Errorf("gc reports %+v expired; want none", rep.Expired)
	}
	// It is due again only once it is unused for 30 days from the write.
	clk.Add(29 * 24 * time.Hour)
	if rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}); err != nil || len(rep.Expired) != 0 {
		t.Errorf("gc 29 days after the write: %+v, %v; want nothing expired", rep, err)
	}
}

// TestCollectSparesWriteInFlight: a write through the wrapper that has
// reached the store, and has not yet returned (its access is recorded as
// it returns, or before), when a Collect runs from start to end, is a use:
// the file must not expire under the writer, whose write then succeeds.
func TestCollectSparesWriteInFlight(t *testing.T) {
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	inner := memstore.New()
	h := &hooked{Store: inner}
	s := expiry.New(h, &expiry.Options{Now: clk.Now})
	if err := s.WriteFile(ctx, "a.md", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	clk.Add(31 * 24 * time.Hour)
	h.once = sync.Once{}
	h.afterWrite = func() {
		if _, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}); err != nil {
			t.Error(err)
		}
	}
	if err := s.WriteFile(ctx, "a.md", []byte("new"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	if got, err := inner.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "new" {
		t.Errorf("a.md holds %q, %v after its write succeeded; want %q", got, err, "new")
	}
}

// failingIndex is a store whose next Update of the access index fails
// when fail is set.
type failingIndex struct {
	memtool.Store
	fail atomic.Bool
}

func (f *failingIndex) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	if name == expiry.IndexName && f.fail.CompareAndSwap(true, false) {
		return errors.New("index write failed")
	}
	return f.Store.Update(ctx, name, limit, fn)
}

// TestFailedRecordIsRetried: an access whose recording failed is not
// taken as recorded: the next use records it, so a file in use does not
// expire because one write of the index failed.
func TestFailedRecordIsRetried(t *testing.T) {
	ctx := context.Background()
	clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	inner := &failingIndex{Store: memstore.New()}
	var failures atomic.Int32
	s := expiry.New(inner, &expiry.Options{Now: clk.Now, OnError: func(error) { failures.Add(1) }})
	if err := s.WriteFile(ctx, "a.md", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	clk.Add(31 * 24 * time.Hour)
	inner.fail.Store(true)
	for range 2 {
		if _, err := s.ReadFile(ctx, "a.md", 1<<20); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
	}
	if failures.Load() != 1 {
		t.Fatalf("%d failures to record, want 1", failures.Load())
	}
	rep, err := expiry.Collect(ctx, inner.Store, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Expired) != 0 {
		t.Errorf("Collect expires %v, read two minutes ago", rep.Expired)
	}
}
