package expiry_test

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// TestNonsenseUseTimeKeepsFile: a use time of zero, one in 1970, a
// negative one, or one past the year 9999 is no use memtool recorded (a damaged index, a bug in an
// older build): gc counts such a file as used at its run, as one with
// no recorded use, instead of expiring it at once.
func TestNonsenseUseTimeKeepsFile(t *testing.T) {
	backendtest.OnDisk(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
		names := []string{"zero.md", "one.md", "negative.md", "min.md", "future.md"}
		for _, n := range names {
			must.Succeed(t, inner.WriteFile(ctx, n, []byte(n), memtool.CreateOnly))
		}
		index := `{"version":1,"access":{"zero.md":0,"one.md":1,"negative.md":-86400,"min.md":-9223372036854775808,"future.md":10000000000000}}`
		must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(index), memtool.CreateOnly))
		opts := expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: func() time.Time { return now }}
		rep, err := expiry.Collect(ctx, inner, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Expired) != 0 {
			t.Errorf("Collect expired %+v for use times that are nonsense", rep.Expired)
		}
		// Still kept twenty days on: they count as used at the first gc.
		now = now.Add(20 * 24 * time.Hour)
		if rep, err = expiry.Collect(ctx, inner, opts); err != nil || len(rep.Expired) != 0 {
			t.Errorf("Collect twenty days later: %+v, %v; want nothing expired", rep.Expired, err)
		}
		for _, n := range names {
			if got := storetest.ReadText(t, inner, n); got != n {
				t.Errorf("%s holds %q", n, got)
			}
		}
		// And they expire as unused once UnusedFor has passed since.
		now = now.Add(20 * 24 * time.Hour)
		if rep, err = expiry.Collect(ctx, inner, opts); err != nil || len(rep.Expired) != len(names) {
			t.Errorf("Collect forty days later: %+v, %v; want all %d expired", rep.Expired, err, len(names))
		}
	})
}
