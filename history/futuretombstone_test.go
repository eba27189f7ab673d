package history

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
)

// TestTombstoneFromTheFuture: a tombstone dated far ahead of the
// writer's clock (its digits damaged, or left by a process whose clock
// ran years ahead and that died before removing it) must not keep the
// file from being written until that date. Before, every write there
// answered ErrBusy ("being deleted by another process") for good, on a
// file the model could not see.
func TestTombstoneFromTheFuture(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace} {
		raw, err := filestore.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		inner := struct{ memtool.Store }{raw} // no rename: deletes leave tombstones
		s := New(inner, &Options{Now: func() time.Time { return now }})
		must.Succeed(t, inner.WriteFile(ctx, "a", tombstone(now.AddDate(200, 0, 0)), memtool.CreateOnly))
		if err := s.WriteFile(ctx, "a", []byte("new"), mode); err != nil {
			t.Fatalf("write (mode %v) over a tombstone dated 200 years ahead: %v", mode, err)
		}
		if got, err := s.ReadFile(ctx, "a", 100); err != nil || string(got) != "new" {
			t.Errorf("a holds %q, %v; want new", got, err)
		}
	}
}

// TestTombstoneFromAFastClock: a tombstone dated minutes or hours ahead
// of the writer's clock is a delete's whose clock runs fast, maybe still
// under way: a write there is refused as busy, changing nothing, rather
// than risk the delete removing it (or an edit after it) unkept.
func TestTombstoneFromAFastClock(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, ahead := range []time.Duration{11 * time.Minute, 23 * time.Hour} {
		raw, err := filestore.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		inner := struct{ memtool.Store }{raw}
		s := New(inner, &Options{Now: func() time.Time { return now }})
		mark := tombstone(now.Add(ahead))
		must.Succeed(t, inner.WriteFile(ctx, "a", mark, memtool.CreateOnly))
		if err := s.WriteFile(ctx, "a", []byte("new"), memtool.Replace); !errors.Is(err, memtool.ErrBusy) {
			t.Errorf("write over a tombstone dated %v ahead: %v, want ErrBusy", ahead, err)
		}
		if got, _ := inner.ReadFile(ctx, "a", 1000); string(got) != string(mark) {
			t.Errorf("the tombstone dated %v ahead was replaced by %q", ahead, got)
		}
	}
}
