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

// A rename that fails (newname is taken: ErrExist) moved nothing, so the
// files in the way are not used by it: d/x.md, unused for 31 days, still
// expires, and the file that did not move keeps its own last use.
func TestFailedRenameRecordsNoUse(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	clk := testclock.New(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	must.Succeed(t, s.Mkdir(ctx, "d"))
	must.Succeed(t, s.WriteFile(ctx, "d/x.md", []byte("old"), memtool.CreateOnly))
	clk.Add(10 * 24 * time.Hour)
	must.Succeed(t, s.WriteFile(ctx, "a.md", []byte("a"), memtool.CreateOnly))
	clk.Add(21 * 24 * time.Hour)
	if err := s.(memtool.Renamer).Rename(ctx, "a.md", "d"); !errors.Is(err, memtool.ErrExist) {
		t.Fatalf("rename onto a directory: %v, want ErrExist", err)
	}
	clk.Add(2 * time.Hour)
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, DryRun: true, Now: clk.Now})
	must.Succeed(t, err)
	var got []string
	for _, e := range rep.Expired {
		got = append(got, e.Path)
	}
	if len(got) != 1 || got[0] != "/memories/d/x.md" {
		t.Errorf("expired %q, want only /memories/d/x.md (unused for 31 days; a.md for 21)", got)
	}
}
