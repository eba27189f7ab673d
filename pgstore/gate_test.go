package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestQueuedWritersLeaveConnections: writes of one tenant queued behind
// its lock (held here by another session) hold two connections of the
// pool between them, not all three, so a read of the tenant still gets
// one and answers while they wait; once the lock is released every write
// is made.
func TestQueuedWritersLeaveConnections(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	opts := pgstore.Options{MaxConns: 3, LockTimeout: 30 * time.Second, OpTimeout: time.Minute}
	root := openWith(t, url, opts)
	s, err := root.Tenant(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "kept", []byte("x"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	holder := connect(t, url)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, pgstore.TenantLockQuery, pgstore.TenantLockKey("t1")); err != nil {
		t.Fatal(err)
	}
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() { errs[i] = s.WriteFile(ctx, "f"+string(rune('a'+i)), []byte("y"), memtool.CreateOnly) })
	}
	// Until two of them wait for the lock in the server.
	for {
		var waiting int
		if err := holder.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// With writers holding every connection, this read would wait for the
	// lock timeout, and the writes would fail.
	if b, err := s.ReadFile(ctx, "kept", 1<<20); err != nil || string(b) != "x" {
		t.Fatalf("a read while the tenant's writes wait: %q, %v", b, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
}
