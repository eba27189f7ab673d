package resource_test

import (
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/testclock"
)

// TestListingIsNoUse: GET /v1/files reads every file for its hash, but a
// listing is no use of a file for the expiry policy (as a search is not):
// a sync client that lists the memory every hour kept every file of it
// from ever expiring.
func TestListingIsNoUse(t *testing.T) {
	ctx := t.Context()
	inner := backendtest.FileStore(t)
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clock.Now})
	if err := s.WriteFile(ctx, "notes.md", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	clock.Add(40 * 24 * time.Hour)
	srv := serveStore(t, s, true, nil)
	if got := paths(listAll(t, srv, "", 10, nil)); len(got) != 1 {
		t.Fatalf("listed %v", got)
	}
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, DryRun: true, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Expired) != 1 || rep.Expired[0].Path != "/memories/notes.md" {
		t.Errorf("a file unused for 40 days but listed (hashed) by GET /v1/files: expired %+v, want /memories/notes.md", rep.Expired)
	}
}
