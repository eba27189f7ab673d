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

// TestIndexTimePastYear9999: an access index holding a time past the
// year 9999 (damaged, or written by a clock gone wild) names the batch
// of the next gc after it, in a format that has four digits for the
// year. Before, that batch's name did not read back as a time: the files
// the gc expired were moved into a directory that Trash did not list,
// Restore did not find, and no gc ever purged, lost to the user.
func TestIndexTimePastYear9999(t *testing.T) {
	backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		must.Succeed(t, inner.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly))
		must.Succeed(t, inner.WriteFile(ctx, "b.md", []byte("beta"), memtool.CreateOnly))
		index := fmt.Sprintf(`{"version":1,"access":{"a.md":%d,"b.md":%d}}`, now.Add(-100*24*time.Hour).Unix(), int64(1e13))
		must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(index), memtool.CreateOnly))
		rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Expired) != 1 || rep.Expired[0].Path != "/memories/a.md" {
			t.Fatalf("Collect expired %+v, want /memories/a.md", rep.Expired)
		}
		trash, err := expiry.Trash(ctx, inner)
		if err != nil {
			t.Fatal(err)
		}
		if len(trash) != 1 || trash[0].Path != "/memories/a.md" {
			t.Errorf("Trash lists %+v, want the expired /memories/a.md", trash)
		}
		if _, err := expiry.Restore(ctx, inner, "/memories/a.md", now); err != nil {
			t.Fatalf("Restore of the expired file: %v", err)
		}
		if got := storetest.ReadText(t, inner, "a.md"); got != "alpha" {
			t.Errorf("restored a.md holds %q", got)
		}
	})
}

// TestTrashBatchAtYear9999: a trash batch named at the last second of
// the year 9999 (a damaged name, or a clock gone wild) is the newest, and
// the next gc's batch may not come before it; it must still be one whose
// name reads back, so the files expired go into that batch.
func TestTrashBatchAtYear9999(t *testing.T) {
	backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		must.Succeed(t, inner.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly))
		index := fmt.Sprintf(`{"version":1,"access":{"a.md":%d}}`, now.Add(-100*24*time.Hour).Unix())
		must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(index), memtool.CreateOnly))
		if _, err := memtool.MkdirAll(ctx, inner, expiry.TrashName+"/99991231T235959Z"); err != nil {
			t.Fatal(err)
		}
		must.Succeed(t, inner.WriteFile(ctx, expiry.TrashName+"/99991231T235959Z/b.md", []byte("beta"), memtool.CreateOnly))
		if _, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: func() time.Time { return now }}); err != nil {
			t.Fatal(err)
		}
		trash, err := expiry.Trash(ctx, inner)
		if err != nil {
			t.Fatal(err)
		}
		if len(trash) != 2 {
			t.Errorf("Trash lists %+v, want /memories/a.md and /memories/b.md", trash)
		}
		if _, err := expiry.Restore(ctx, inner, "/memories/a.md", now); err != nil {
			t.Fatalf("Restore of the expired file: %v", err)
		}
	})
}
