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
// removal of the file a (with update, before an update of it instead).
type beforeRemove struct {
	memtool.Store
	update bool
	then   func()
}

func (s *beforeRemove) Remove(ctx context.Context, name string) error {
	s.call(name, false)
	return s.Store.Remove(ctx, name)
}

func (s *beforeRemove) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	s.call(name, true)
	return s.Store.Update(ctx, name, limit, fn)
}

func (s *beforeRemove) call(name string, update bool) {
	if then := s.then; name == "a" && update == s.update && then != nil {
		s.then = nil
		then()
	}
}

// TestTombstoneTakenOverBeforeRemoval: over a store without rename, a
// writer whose clock runs eleven minutes ahead takes a live delete's
// fresh tombstone for stale, with no stall of the delete: its write,
// acknowledged, lands after the delete's last look at the tombstone and
// before its removal, and the delete removes it. The writer kept what it
// wrote as a version before it replaced the tombstone, so the removal
// loses nothing. Before, the write was removed without a version.
func TestTombstoneTakenOverBeforeRemoval(t *testing.T) {
	for _, mode := range []memtool.WriteMode{memtool.CreateOnly, memtool.Replace} {
		ctx := context.Background()
		mem := memstore.New()
		now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		innerA := &beforeRemove{Store: mem}
		a := New(innerA, &Options{Now: func() time.Time { return now }})
		b := New(struct{ memtool.Store }{mem}, &Options{Now: func() time.Time { return now.Add(staleTombstone + time.Minute) }})
		must.Succeed(t, a.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly))
		innerA.then = func() {
			must.Succeed(t, b.WriteFile(ctx, "a", []byte("new"), mode))
		}
		must.Succeed(t, a.Remove(ctx, "a"))
		if innerA.then != nil {
			t.Fatal("no removal of a")
		}
		if data, err := a.ReadFile(ctx, "a", 100); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("mode %d: after the delete that removed the write: %q, %v; want no file", mode, data, err)
		}
		if got := texts(t, mem, "a"); !reflect.DeepEqual(got, []string{"1 delete old", "2 delete new"}) {
			t.Errorf("mode %d: the write acknowledged during the delete is not kept: versions %q", mode, got)
		}
	}
}

// TestTombstoneTakeoverRaced: two writers take over a dead delete's
// stale tombstone at once. The one whose update finds the tombstone gone
// fails as a create where a file is, and drops the version it saved of
// its content (number 2, never handed out again): only the content that
// took the tombstone's place is kept.
func TestTombstoneTakeoverRaced(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	opts := &Options{Now: func() time.Time { return now }}
	a := New(struct{ memtool.Store }{mem}, opts)
	must.Succeed(t, a.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly))
	if _, _, _, err := newStore(struct{ memtool.Store }{mem}, opts).entomb(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	// It died here.
	now = now.Add(staleTombstone + time.Second)
	innerB := &beforeRemove{Store: mem, update: true}
	b := New(innerB, opts)
	innerB.then = func() {
		must.Succeed(t, a.WriteFile(ctx, "a", []byte("first"), memtool.CreateOnly))
	}
	if err := b.WriteFile(ctx, "a", []byte("second"), memtool.CreateOnly); !errors.Is(err, memtool.ErrExist) {
		t.Errorf("the create that lost the race: %v, want ErrExist", err)
	}
	if innerB.then != nil {
		t.Fatal("no update of a")
	}
	if data, err := a.ReadFile(ctx, "a", 100); string(data) != "first" {
		t.Errorf("after the race: %q, %v; want the winner's content", data, err)
	}
	if got := texts(t, mem, "a"); !reflect.DeepEqual(got, []string{"1 delete old", "3 delete first"}) {
		t.Errorf("versions %q", got)
	}
}
