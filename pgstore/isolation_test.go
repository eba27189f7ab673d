package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// repeatableRead is url with sessions whose transactions default to
// REPEATABLE READ, as a server, database or role configured so gives
// them (default_transaction_isolation).
func repeatableRead(url string) string {
	return url + "&default_transaction_isolation=repeatable%20read"
}

// patient are Options that wait out a lock held for the whole of a test.
var patient = pgstore.Options{LockTimeout: 30 * time.Second, OpTimeout: time.Minute}

// queued runs each of fns in a goroutine of its own while a session of
// the test holds the lock query (with args) takes, until all of them wait
// for it in the server; then it releases the lock and waits for them.
func queued(t *testing.T, url, query string, args []any, fns ...func()) {
	t.Helper()
	queuedThen(t, url, query, args, false, fns...)
}

// queuedThen is queued, with the session's transaction committed instead
// of rolled back if commit is set.
func queuedThen(t *testing.T, url, query string, args []any, commit bool, fns ...func()) {
	t.Helper()
	ctx := context.Background()
	tx := holderTx(t, url)
	if _, err := tx.Exec(ctx, query, args...); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Go(fn)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
wait:
	for {
		select {
		case <-done:
			t.Error("they ended before they all waited for the lock")
			break wait
		default:
		}
		var waiting int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= len(fns) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	end := tx.Rollback
	if commit {
		end = tx.Commit
	}
	if err := end(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
}

// TestIsolationLevel runs a store whose sessions default to REPEATABLE
// READ, and writes that wait for the tenant's lock (or the migration
// lock) together. Each must see what the one before it committed: a
// transaction of that level reads the snapshot its first statement took,
// which here would be the one that waited for the lock, from before the
// other write committed.
func TestIsolationLevel(t *testing.T) {
	ctx := context.Background()

	// Whichever goes first, nothing is left.
	t.Run("RemoveAll and WriteFile inside", func(t *testing.T) {
		url := pgtest.URL(t)
		s := openWith(t, repeatableRead(url), patient)
		if err := s.Mkdir(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		var removeErr, writeErr error
		queued(t, url, pgstore.TenantLockQuery, []any{pgstore.TenantLockKey("")},
			func() { removeErr = s.RemoveAll(ctx, "d") },
			func() { writeErr = s.WriteFile(ctx, "d/x", []byte("x"), memtool.CreateOnly) })
		if removeErr != nil {
			t.Errorf("RemoveAll: %v", removeErr)
		}
		if writeErr != nil && !errors.Is(writeErr, memtool.ErrNotExist) {
			t.Errorf("WriteFile: %v, want success or ErrNotExist", writeErr)
		}
		rows, _ := connect(t, url).Query(ctx, `SELECT parent || '/' || name FROM memtool_entries`)
		left, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("after RemoveAll(d) and WriteFile(d/x) (%v), rows left: %q", writeErr, left)
		}
	})

	// None fails, none is lost.
	t.Run("Updates", func(t *testing.T) {
		url := pgtest.URL(t)
		s := openWith(t, repeatableRead(url), patient)
		if err := s.WriteFile(ctx, "n", nil, memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2)
		update := func(i int) func() {
			return func() {
				errs[i] = s.Update(ctx, "n", 1<<20, func(old []byte) ([]byte, error) { return append(old, 'x'), nil })
			}
		}
		queued(t, url, pgstore.TenantLockQuery, []any{pgstore.TenantLockKey("")}, update(0), update(1))
		for i, err := range errs {
			if err != nil {
				t.Errorf("Update %d: %v", i, err)
			}
		}
		if got, err := s.ReadFile(ctx, "n", 1<<20); err != nil || string(got) != "xx" {
			t.Errorf("after two Updates appending x: %q, %v; want \"xx\"", got, err)
		}
	})

	// Two processes opening a new database at once: the second finds the
	// schema the first made.
	t.Run("Open", func(t *testing.T) {
		url := pgtest.URL(t)
		errs := make([]error, 2)
		open := func(i int) func() {
			return func() {
				s, err := pgstore.Open(ctx, repeatableRead(url), &patient)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			}
		}
		queued(t, url, `SELECT pg_advisory_xact_lock($1)`, []any{int64(pgstore.MigrationLock)}, open(0), open(1))
		for i, err := range errs {
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
			}
		}
	})

	// Two processes claiming the mode of a new database at once (here
	// a session that records it while the store's Tenant call records it
	// too): the store finds the mode the other recorded, rather than
	// failing on a row its statement's snapshot does not see (which ON
	// CONFLICT refuses at REPEATABLE READ: could not serialize access).
	t.Run("Claim", func(t *testing.T) {
		url := pgtest.URL(t)
		openWith(t, url, patient) // the tables, and no mode yet
		s := openWith(t, repeatableRead(url), patient)
		var tenantErr, writeErr error
		queuedThen(t, url, `INSERT INTO memtool_meta (key, value) VALUES ('tenancy', 'multi')`, nil, true,
			func() {
				var ts memtool.Store
				if ts, tenantErr = s.Tenant(ctx, "t1"); tenantErr == nil {
					writeErr = ts.WriteFile(ctx, "f", []byte("x"), memtool.CreateOnly)
				}
			})
		if tenantErr != nil || writeErr != nil {
			t.Errorf("Tenant while another claims the database multi-tenant: %v; its write: %v; want both to succeed", tenantErr, writeErr)
		}
	})
}
