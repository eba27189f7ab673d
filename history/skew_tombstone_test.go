package history

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
)

// beforeRemove is a store without rename that calls then, once, before a
// removal of the file a.
type beforeRemove struct {
	memtool.Store
	then func()
}

func (s *beforeRemove) Remove(ctx context.Context, name string) error {
	if then := s.then; name == "a" && then != nil {
		s.then = nil
		then()
	}
	return s.Store.Remove(ctx, name)
}

// TestTombstoneTakenOverBeforeRemoval: over a store without rename, a
// writer whose clock runs eleven minutes ahead takes a live delete's
// fresh tombstone for stale, with no stall of the delete: its write,
// acknowledged, lands after the delete's last look at the tombstone and
// before its removal, and is removed without a version. Package doc
// names that instant; skew opens it to any write, not only to one after
// a ten-minute stall. A fix (delete.go): a writer that replaces a
// tombstone keeps what it writes as a version first, or judges a
// tombstone stale by its own observation (the mark unchanged over
// staleTombstone of its own clock) rather than by the time in it.
func TestTombstoneTakenOverBeforeRemoval(t *testing.T) {
	t.Skip("bug: a writer whose clock runs ahead by more than staleTombstone replaces a live delete's tombstone, and the delete then removes the acknowledged write unkept (delete.go)")
	ctx := context.Background()
	mem := memstore.New()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	innerA := &beforeRemove{Store: mem}
	a := New(innerA, &Options{Now: func() time.Time { return now }})
	b := New(struct{ memtool.Store }{mem}, &Options{Now: func() time.Time { return now.Add(staleTombstone + time.Minute) }})
	must.Succeed(t, a.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly))
	innerA.then = func() {
		must.Succeed(t, b.WriteFile(ctx, "a", []byte("new"), memtool.CreateOnly))
	}
	must.Succeed(t, a.Remove(ctx, "a"))
	if innerA.then != nil {
		t.Fatal("no removal of a")
	}
	data, err := a.ReadFile(ctx, "a", 100)
	kept := texts(t, mem, "a")
	if string(data) != "new" && len(kept) < 2 {
		t.Errorf("the write acknowledged during the delete is gone (%q, %v) and not kept: versions %q", data, err, kept)
	}
}
