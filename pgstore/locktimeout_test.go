package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

// A LockTimeout under a millisecond still bounds the wait for a lock
// another session holds: the write fails with ErrBusy, as with any other
// LockTimeout, not with "did not answer" once OpTimeout has passed (the
// server reads a lock_timeout of 0 ms as no timeout at all).
func TestSubMillisecondLockTimeout(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	// The schema is made first, with the default lock timeout: made under
	// the short one, the migration's CREATE EXTENSION could time out on
	// the locks that other tests' stores, on the same database, take
	// while they make or drop theirs (seen in CI: Open failed with ErrBusy).
	openWith(t, url, pgstore.Options{}).Close()
	s := openWith(t, url, pgstore.Options{LockTimeout: 300 * time.Microsecond, OpTimeout: 5 * time.Second})
	if err := s.WriteFile(ctx, "x", []byte("old"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	tx := holderTx(t, url)
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pgstore.TenantLockQuery, pgstore.TenantLockKey("")); err != nil {
		t.Fatal(err)
	}
	err := storetest.Answer(t, "WriteFile", func() error { return s.WriteFile(ctx, "x", []byte("new"), memtool.Replace) })
	if !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("WriteFile while the tenant's lock is held, LockTimeout 300µs: %v, want ErrBusy", err)
	}
}

// A LockTimeout or OpTimeout longer than the server's timeouts can be
// (2^31-1 ms, almost 25 days) is the longest they can be: the store
// opens, reads and writes, rather than having every connection refused
// at its start-up for a setting out of range.
func TestLongTimeouts(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := openWith(t, url, pgstore.Options{LockTimeout: 30 * 24 * time.Hour, OpTimeout: 365 * 24 * time.Hour})
	if err := s.WriteFile(ctx, "x", []byte("x"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadFile(ctx, "x", 10); err != nil || string(got) != "x" {
		t.Errorf("ReadFile: %q, %v", got, err)
	}
}
