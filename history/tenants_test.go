package history_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/storetest"
)

// TestTenantsKeepTheirOwnVersions: Tenant returns the tenant's store
// under the same policy, whose versions (and, with expiry below, access
// index) are kept inside that tenant: another tenant neither sees them
// nor loses its own to the first one's MaxBytes, and a Collect of one
// tenant leaves the other's files alone.
func TestTenantsKeepTheirOwnVersions(t *testing.T) {
	ctx := context.Background()
	root := backendtest.FileStore(t)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	top := history.New(expiry.New(root, &expiry.Options{Now: now}), &history.Options{MaxBytes: 2 << 10, Now: now})
	open := func(id string) (memtool.Store, memtool.Store) {
		t.Helper()
		s, err := top.(memtool.Tenanted).Tenant(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := root.Tenant(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s, raw
	}
	a, rawA := open("alice")
	b, rawB := open("bob")
	memA, memB := memtool.New(a, nil), memtool.New(b, nil)
	storetest.Call(t, memA, map[string]any{"command": "create", "path": "/memories/n.md", "file_text": "alice's only copy\n"})
	storetest.Call(t, memA, map[string]any{"command": "delete", "path": "/memories/n.md"})
	// Bob's many versions of the same path stay within bob.
	storetest.Call(t, memB, map[string]any{"command": "create", "path": "/memories/n.md", "file_text": "bob\n"})
	for range 40 {
		storetest.Call(t, memB, map[string]any{"command": "create", "path": "/memories/n.md", "file_text": strings.Repeat("bob\n", 100)})
		storetest.Call(t, memB, map[string]any{"command": "delete", "path": "/memories/n.md"})
		storetest.Call(t, memB, map[string]any{"command": "create", "path": "/memories/n.md", "file_text": "bob\n"})
	}
	vs, err := history.Versions(ctx, rawA, "/memories/n.md")
	if err != nil || len(vs) != 1 {
		t.Fatalf("alice's versions: %v, %v; want her one", vs, err)
	}
	if data, err := history.Read(ctx, rawA, "/memories/n.md", vs[0].N); err != nil || string(data) != "alice's only copy\n" {
		t.Errorf("alice's version: %q, %v", data, err)
	}
	if r := storetest.Call(t, memB, map[string]any{"command": "view", "path": "/memories"}); strings.Contains(r.Text, "memtool") {
		t.Errorf("bob's view shows policy data:\n%s", r.Text)
	}
	// Expiry: alice's file unused for long, bob's just used; a Collect of
	// bob's store expires nothing of alice's.
	storetest.Call(t, memA, map[string]any{"command": "create", "path": "/memories/old.md", "file_text": "old\n"})
	clock = clock.Add(90 * 24 * time.Hour)
	storetest.Call(t, memB, map[string]any{"command": "view", "path": "/memories/n.md"})
	rep, err := expiry.Collect(ctx, rawB, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: now})
	if err != nil || len(rep.Expired) != 0 {
		t.Errorf("Collect of bob: %+v, %v", rep, err)
	}
	if _, err := rawA.Stat(ctx, "old.md"); err != nil {
		t.Errorf("alice's unused file after bob's Collect: %v", err)
	}
	rep, err = expiry.Collect(ctx, rawA, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: now})
	if err != nil || len(rep.Expired) != 1 || rep.Expired[0].Path != "/memories/old.md" {
		t.Errorf("Collect of alice: %+v, %v; want old.md expired", rep, err)
	}
	if _, err := rawB.Stat(ctx, "n.md"); err != nil {
		t.Errorf("bob's file after alice's Collect: %v", err)
	}
}
