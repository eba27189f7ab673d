package history

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
)

// afterUpdate is a store without rename that calls then, once, after an
// update of the file a.
type afterUpdate struct {
	memtool.Store
	then func()
}

func (s *afterUpdate) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	err := s.Store.Update(ctx, name, limit, fn)
	if then := s.then; name == "a" && then != nil {
		s.then = nil
		then()
	}
	return err
}

// TestTombstoneTakenOverEarly: over a store without rename, a process
// whose clock runs more than ten minutes ahead takes another's fresh
// tombstone for stale and writes in its place; the delete then finds its
// tombstone gone, and leaves the acknowledged write alone. Before, it
// removed the file unseen, and the write was lost without a version. The
// write keeps its content as a version too, since it cannot know that
// the delete will look before it removes (TestTombstoneTakenOverBeforeRemoval).
func TestTombstoneTakenOverEarly(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	innerA := &afterUpdate{Store: mem}
	a := New(innerA, &Options{Now: func() time.Time { return now }})
	b := New(struct{ memtool.Store }{mem}, &Options{Now: func() time.Time { return now.Add(staleTombstone + time.Minute) }})
	must.Succeed(t, a.WriteFile(ctx, "a", []byte("old"), memtool.CreateOnly))
	innerA.then = func() {
		must.Succeed(t, b.WriteFile(ctx, "a", []byte("new"), memtool.CreateOnly))
	}
	must.Succeed(t, a.Remove(ctx, "a"))
	if innerA.then != nil {
		t.Fatal("no update of a")
	}
	if data, err := a.ReadFile(ctx, "a", 100); string(data) != "new" {
		t.Errorf("after the delete and the write that followed it: %q, %v; want the write's content", data, err)
	}
	if got := texts(t, mem, "a"); !reflect.DeepEqual(got, []string{"1 delete old", "2 delete new"}) {
		t.Errorf("versions %q", got)
	}
}
