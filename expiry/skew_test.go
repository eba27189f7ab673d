package expiry_test

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/internal/testclock"
)

// TestSlowClockKeepsLaterAccess: a process whose clock is behind records
// its use of a file with a time earlier than the access another process
// recorded just before. That stamp must not replace the later one: the
// file, used a day ago by the clock of gc, would be taken for one unused
// since two days before that, and expire while in use.
func TestSlowClockKeepsLaterAccess(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		clk := testclock.New(start)
		slow := func() time.Time { return clk.Now().Add(-2 * 24 * time.Hour) }
		a := expiry.New(inner, &expiry.Options{Now: clk.Now})
		b := expiry.New(inner, &expiry.Options{Now: slow})
		must.Succeed(t, a.WriteFile(ctx, "a.md", []byte("text"), memtool.CreateOnly))
		clk.Add(time.Minute)
		if _, err := b.ReadFile(ctx, "a.md", 1<<20); err != nil {
			t.Fatal(err)
		}
		clk.Add(29 * 24 * time.Hour) // 29 days after both uses
		rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Expired) != 0 {
			t.Errorf("gc expired %+v, written 29 days ago (gc's clock and the writer's agree)", rep.Expired)
		}
		if _, err := inner.Stat(ctx, "a.md"); err != nil {
			t.Errorf("a.md after gc: %v", err)
		}
	})
}

// TestSlowClockUseDuringCollectIsSeen: a use recorded while Collect runs
// puts the file back also when the clock of the process that records it
// is behind the access already recorded, so that the record cannot
// lower it: the index must still change.
func TestSlowClockUseDuringCollectIsSeen(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		clk := testclock.New(start)
		a := expiry.New(inner, &expiry.Options{Now: clk.Now})
		must.Succeed(t, a.WriteFile(ctx, "a.md", []byte("old"), memtool.CreateOnly))
		clk.Add(31 * 24 * time.Hour)
		// Its clock is 32 days behind: its stamp is before the one recorded.
		b := expiry.New(inner, &expiry.Options{Now: func() time.Time { return clk.Now().Add(-32 * 24 * time.Hour) }})
		h := &renameHooked{Store: inner}
		h.after = func(oldname, _ string) {
			if oldname == "a.md" {
				must.Succeed(t, b.WriteFile(ctx, "a.md", []byte("new"), memtool.Replace))
			}
		}
		if _, err := expiry.Collect(ctx, h, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}); err != nil {
			t.Fatal(err)
		}
		if got, err := inner.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "new" {
			t.Errorf("a.md holds %q, %v after a write during gc; want %q", got, err, "new")
		}
	})
}
