package keys_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/keys"
)

// TestCacheBound: a flood of unknown ids keeps the cache within its bound
// and drops the least recently used ids first, so a key in use stays
// cached through it (here a key revoked by another keyring still works,
// as it does for CacheFor after what this keyring read), and no flood
// empties the cache all at once.
func TestCacheBound(t *testing.T) {
	defer keys.SetMaxCached(8)()
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	url := filepath.Join(t.TempDir(), "memories")
	k, other := open(t, url, c), open(t, url, c)
	key, token, err := k.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Write})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Verify(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := other.Revoke(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		for j := range 3 {
			if _, err := k.Verify(ctx, fmt.Sprintf("mt_%08x%08x_%064x", i, j, 0)); err == nil {
				t.Fatal("a made-up token was accepted")
			}
		}
		if _, err := k.Verify(ctx, token); err != nil {
			t.Fatalf("after %d unknown ids, the key in use was dropped from the cache: %v", 3*(i+1), err)
		}
		if n := k.Cached(); n > 8 || n < 4 {
			t.Fatalf("after %d unknown ids the cache holds %d keys, want 4 to 8", 3*(i+1), n)
		}
	}
	// Past CacheFor, the key is read again: revoked.
	c.Add(keys.DefaultCacheFor)
	if _, err := k.Verify(ctx, token); err == nil {
		t.Error("a revoked key still works after CacheFor")
	}
}
