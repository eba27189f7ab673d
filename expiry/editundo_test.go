package expiry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/memstore"
)

// duringEdit is a memstore whose Update of name runs before and after
// once: what parallel calls do while an edit runs.
type duringEdit struct {
	memtool.Store
	name          string
	before, after func()
}

func (d *duringEdit) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	if name != d.name || d.before == nil {
		return d.Store.Update(ctx, name, limit, fn)
	}
	before, after := d.before, d.after
	d.before, d.after = nil, nil
	before()
	err := d.Store.Update(ctx, name, limit, fn)
	after()
	return err
}

// An edit that finds no file takes back only a use it cannot be taking
// from a file made meanwhile: a.md, last used 31 days ago, is removed
// while an edit of it runs (which then finds no file) and created anew
// before the edit returns, in the same second, as one turn's parallel
// calls do. The new file was used now; the failed edit gave a.md's old
// use back over the new file's, and gc took a file written an hour
// before for one unused for a month.
func TestFailedEditLeavesNewFilesUse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(ctx context.Context, s, inner memtool.Store) error
	}{
		// Through the wrapper: the remove forgets a.md's use, and the
		// create records one in the very second the edit recorded.
		{"removed through the wrapper", func(ctx context.Context, s, _ memtool.Store) error { return s.Remove(ctx, "a.md") }},
		// Around it (as in TestFailedEditKeepsLastUse): the create is
		// within the Resolution of the edit's use, so it records none.
		{"removed around the wrapper", func(ctx context.Context, _, inner memtool.Store) error { return inner.Remove(ctx, "a.md") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			inner := memstore.New()
			clk := testclock.New(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
			d := &duringEdit{Store: inner, name: "a.md"}
			s := expiry.New(d, &expiry.Options{Now: clk.Now})
			must.Succeed(t, s.WriteFile(ctx, "a.md", []byte("old"), memtool.CreateOnly))
			clk.Add(31 * 24 * time.Hour)
			d.before = func() { must.Succeed(t, tc.remove(ctx, s, inner)) }
			d.after = func() { must.Succeed(t, s.WriteFile(ctx, "a.md", []byte("new"), memtool.CreateOnly)) }
			edit := func(old []byte) ([]byte, error) { return append(old, '!'), nil }
			if err := s.Update(ctx, "a.md", 100, edit); !errors.Is(err, memtool.ErrNotExist) {
				t.Fatalf("edit of a file removed meanwhile: %v, want ErrNotExist", err)
			}
			clk.Add(time.Hour)
			rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, DryRun: true, Now: clk.Now})
			must.Succeed(t, err)
			if len(rep.Expired) != 0 {
				t.Errorf("expired %v, written an hour ago", rep.Expired)
			}
		})
	}
}
