package history

import (
	"context"
	"errors"
	"reflect"
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
// before its removal, and the delete removes it. The writer kept what it
// wrote as a version before it replaced the tombstone, so the removal
// loses nothing. Before, the write was removed without a version.
func TestTombstoneTakenOverBeforeRemoval(t *testing.T) {
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
	if data, err := a.ReadFile(ctx, "a", 100); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("after the delete that removed the write: %q, %v; want no file", data, err)
	}
	if got := texts(t, mem, "a"); !reflect.DeepEqual(got, []string{"1 delete old", "2 delete new"}) {
		t.Errorf("the write acknowledged during the delete is not kept: versions %q", got)
	}
}
