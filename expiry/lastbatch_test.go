package expiry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// TestLastBatchTakesAPathTwice: once the newest trash batch is at the
// last second of the year 9999, every later gc puts its files into it;
// a file expired again at a path that batch already holds, or under one,
// must not make that gc, and every later one, fail. Before, the move
// into the batch failed (the name exists, or a parent is a file) and so
// did every gc from then on, expiring nothing: the file stays, unexpired.
func TestLastBatchTakesAPathTwice(t *testing.T) {
	for _, held := range []string{"a.md", "d"} {
		t.Run(held, func(t *testing.T) {
			backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
				ctx := context.Background()
				now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
				last := expiry.TrashName + "/99991231T235959Z"
				_, err := memtool.MkdirAll(ctx, inner, last)
				must.Succeed(t, err)
				must.Succeed(t, inner.WriteFile(ctx, last+"/"+held, []byte("expired before"), memtool.CreateOnly))
				_, err = memtool.MkdirAll(ctx, inner, "d")
				must.Succeed(t, err)
				must.Succeed(t, inner.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly))
				must.Succeed(t, inner.WriteFile(ctx, "d/x.md", []byte("x"), memtool.CreateOnly))
				old := now.Add(-100 * 24 * time.Hour).Unix()
				index := fmt.Sprintf(`{"version":1,"access":{"a.md":%d,"d/x.md":%d}}`, old, old)
				must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(index), memtool.CreateOnly))
				for i := range 2 {
					if _, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: func() time.Time { return now }}); err != nil {
						t.Fatalf("gc %d: %v", i+1, err)
					}
				}
				if got := storetest.ReadText(t, inner, last+"/"+held); got != "expired before" {
					t.Errorf("the trash's %s holds %q", held, got)
				}
				if held == "a.md" && storetest.ReadText(t, inner, "a.md") != "alpha" {
					t.Errorf("a.md, whose place in the batch is taken, is not in place")
				}
			})
		})
	}
}
