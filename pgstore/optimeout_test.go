package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// deadlines is the store's db that records the deadline of each call that
// reaches the server.
type deadlines struct {
	*db
	mu   sync.Mutex
	seen []time.Time
}

func (d *deadlines) note(ctx context.Context) {
	dl, _ := ctx.Deadline()
	d.mu.Lock()
	d.seen = append(d.seen, dl)
	d.mu.Unlock()
}

func (d *deadlines) Query(ctx context.Context, fn func(q sqltree.Querier) error) error {
	d.note(ctx)
	return d.db.Query(ctx, fn)
}

func (d *deadlines) Write(ctx context.Context, tenant string, fn func(q sqltree.Querier) error) error {
	d.note(ctx)
	return d.db.Write(ctx, tenant, fn)
}

func (d *deadlines) WriteMeta(ctx context.Context, fn func(q sqltree.Querier) error) error {
	d.note(ctx)
	return d.db.WriteMeta(ctx, fn)
}

// take returns the deadlines recorded since the last call.
func (d *deadlines) take() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := d.seen
	d.seen = nil
	return seen
}

// TestOneOpTimeout: every method, however many statements it sends, is
// bounded by one OpTimeout, taken when it is called: no statement of it
// has a later deadline than its first. (Mkdir of a new directory asked
// whether it exists under one OpTimeout and then made it under a second,
// so it could take twice as long.)
func TestOneOpTimeout(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := &deadlines{db: s.db}
	tree := sqltree.New(rec, dialect, "pgstore", "pgstore")
	for _, m := range []struct {
		name string
		fn   func() error
	}{
		{"Mkdir", func() error { return tree.Mkdir(ctx, "d") }},
		{"Mkdir of an existing directory", func() error { return tree.Mkdir(ctx, "d") }},
		{"WriteFile", func() error { return tree.WriteFile(ctx, "d/f", []byte("x"), memtool.CreateOnly) }},
		{"Update", func() error {
			return tree.Update(ctx, "d/f", 10, func(b []byte) ([]byte, error) { return append(b, 'y'), nil })
		}},
		{"Rename", func() error { return tree.Rename(ctx, "d", "e") }},
		{"ReadDir", func() error { _, err := tree.ReadDir(ctx, "e"); return err }},
		{"RemoveAll", func() error { return tree.RemoveAll(ctx, "e") }},
	} {
		rec.take()
		if err := m.fn(); err != nil && m.name != "Mkdir of an existing directory" {
			t.Fatalf("%s: %v", m.name, err)
		}
		seen := rec.take()
		if len(seen) == 0 {
			t.Fatalf("%s reached no server", m.name)
		}
		for i, dl := range seen {
			if dl.IsZero() || dl.After(seen[0]) {
				t.Errorf("%s: call %d of %d has the deadline %v, after the first's %v", m.name, i+1, len(seen), dl, seen[0])
			}
		}
	}
}
