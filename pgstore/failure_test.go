package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree/sqltreetest"
	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

// short are Options with short timeouts, for the tests that wait them out.
var short = pgstore.Options{
	ConnectTimeout: 500 * time.Millisecond,
	OpTimeout:      time.Second,
	LockTimeout:    200 * time.Millisecond,
}

func openWith(t *testing.T, url string, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, &opts)
	return storetest.Opened(t, s, err)
}

// connect opens a connection of the test's own to the server.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// holderTx begins a transaction on a connection of its own, as another
// session that holds locks would.
func holderTx(t *testing.T, url string) pgx.Tx {
	t.Helper()
	tx, err := connect(t, url).Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// openProxied opens a store with short timeouts through a proxy to the
// server of the URL direct, and returns the proxy and the store. The proxy
// stops before the store closes (cleanups run last first), as in
// TestFrozenServer: a store that hangs must fail the test, not hang it.
func openProxied(t *testing.T, direct string) (*proxy, *pgstore.Store) {
	t.Helper()
	p, proxied := startProxy(t, direct)
	s := openWith(t, proxied, short)
	t.Cleanup(p.close)
	return p, s
}

// ops are the store's methods, each on a name of its own, so that what a
// failed write did not do can be checked afterwards.
var ops = storeops.All()

// withPassword returns rawURL with a password, which the server (trust
// authentication) does not ask for and no error may show.
func withPassword(t *testing.T, rawURL, password string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// TestFrozenServer puts a proxy that stops forwarding between the store
// and the server, as a stopped server or a broken network does: every
// method and Open end with an error within the store's timeouts, which is
// neither ErrBusy nor a cancellation and shows no password; a cancelled
// context ends a method at once; nothing failed is done; and once the
// proxy forwards again the store works.
func TestFrozenServer(t *testing.T) {
	ctx := context.Background()
	const password = "pw-not-to-show"
	direct := pgtest.URL(t)
	p, proxied := startProxy(t, withPassword(t, direct, password))
	s := openWith(t, proxied, short)
	storeops.Seed(t, s)
	// Stop the proxy before the stores close (cleanups run last first): a
	// store that hangs must fail the test, not hang it.
	t.Cleanup(p.close)
	patient := short
	patient.OpTimeout, patient.ConnectTimeout = time.Hour, time.Hour
	ps := openWith(t, proxied, patient)

	p.freeze()
	for _, op := range ops {
		err := storetest.Answer(t, op.Name, func() error { return op.Run(ctx, s) })
		switch {
		case err == nil:
			t.Errorf("%s through a frozen server succeeded", op.Name)
		case errors.Is(err, memtool.ErrBusy), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s through a frozen server: %v, want an error that is neither ErrBusy nor a cancellation", op.Name, err)
		case strings.Contains(err.Error(), password):
			t.Errorf("%s through a frozen server: the error shows the password: %v", op.Name, err)
		}
	}
	// Open connects anew: ConnectTimeout bounds it, or the URL's
	// connect_timeout when the Options leave it out, or else
	// DefaultConnectTimeout (the README's promise: 10 seconds, within
	// Answer's 30).
	for _, o := range []struct {
		url  string
		opts pgstore.Options
	}{
		{proxied, short},
		{proxied + "&connect_timeout=1", pgstore.Options{OpTimeout: time.Hour}},
		{proxied, pgstore.Options{OpTimeout: time.Hour}},
	} {
		err := storetest.Answer(t, "Open", func() error {
			_, err := pgstore.Open(ctx, o.url, &o.opts)
			return err
		})
		if err == nil || strings.Contains(err.Error(), password) {
			t.Errorf("Open through a frozen server: %v, want an error without the password", err)
		}
	}
	sqltreetest.CancelledWrite(t, ps)

	p.resume()
	storeops.CheckUnchanged(t, openWith(t, direct, short))
	for _, op := range ops {
		if err := storetest.Answer(t, op.Name, func() error { return op.Run(ctx, s) }); err != nil {
			t.Errorf("%s once the server answers again: %v", op.Name, err)
		}
	}
	if storeops.Exists(ctx, s, "cancelled") {
		t.Errorf("the cancelled write made its change")
	}
}

// TestFrozenClient freezes the network of a store in the middle of its
// Update, with the tenant's lock and the row's lock held: the server ends
// that transaction after the store's OpTimeout, so another store gets the
// locks while the first is still cut off, and the cut-off Update has
// changed nothing.
func TestFrozenClient(t *testing.T) {
	ctx := context.Background()
	direct := pgtest.URL(t)
	p, cut := openProxied(t, direct)
	storeops.Seed(t, cut)
	other := openWith(t, direct, short)

	err := storetest.Answer(t, "Update", func() error {
		return cut.Update(ctx, "kept", 100, func([]byte) ([]byte, error) {
			p.freeze()
			return []byte("from the cut-off store"), nil
		})
	})
	if err == nil {
		t.Fatal("Update whose network froze succeeded")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := other.Update(ctx, "kept", 100, func([]byte) ([]byte, error) { return []byte("from the other"), nil })
		if err == nil {
			break
		}
		if !errors.Is(err, memtool.ErrBusy) || time.Now().After(deadline) {
			t.Fatalf("Update of the other store while the cut-off one holds the locks: %v", err)
		}
	}
	if got, err := other.ReadFile(ctx, "kept", 100); err != nil || string(got) != "from the other" {
		t.Errorf("after the other's Update: %q, %v", got, err)
	}
	p.resume()
}

// TestLostCommitAnswer lets the server get a write's commit and keeps its
// answer from the store: the write fails with an error that says the
// change may have been made (not a cancellation, nor ErrBusy), it is not
// tried again, and the change is there exactly once.
func TestLostCommitAnswer(t *testing.T) {
	ctx := context.Background()
	direct := pgtest.URL(t)
	p, s := openProxied(t, direct)
	if err := s.WriteFile(ctx, "log", []byte("a\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	// The write-back and the COMMIT go to the server together: freeze once
	// the new content has gone.
	p.freezeAfter([]byte("b-lost-answer\n"))
	err := storetest.Answer(t, "Update", func() error {
		return s.Update(ctx, "log", 100, func(old []byte) ([]byte, error) { return append(old, "b-lost-answer\n"...), nil })
	})
	if err == nil || !strings.Contains(err.Error(), "may or may not have been made") || !errors.Is(err, memtool.ErrOutcomeUnknown) ||
		errors.Is(err, memtool.ErrBusy) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Update whose commit got no answer: %v, want an error that says the change may have been made", err)
	}
	p.resume()
	if got, err := openWith(t, direct, short).ReadFile(ctx, "log", 100); err != nil || string(got) != "a\nb-lost-answer\n" {
		t.Errorf("after the commit without answer: %q, %v; want the change once", got, err)
	}
}

// TestHeldLocks holds, from a connection of its own, each lock a write of
// the store waits for: the write fails with ErrBusy after the lock
// timeout and changes nothing, reads and other tenants go on, and once
// the lock is released the write succeeds.
func TestHeldLocks(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		tenant string
		lock   string
		args   []any
		// busy and free are the ops that must fail, and that must not.
		busy, free []string
	}{
		{"tenant-less store's lock", "", pgstore.TenantLockQuery, []any{pgstore.TenantLockKey("")},
			[]string{"WriteFile", "Update", "Mkdir", "Remove", "RemoveAll", "Rename"}, []string{"Stat", "ReadFile", "ReadDir"}},
		{"tenant's lock", "t1", pgstore.TenantLockQuery, []any{pgstore.TenantLockKey("t1")},
			[]string{"WriteFile", "Update", "Mkdir", "Remove", "RemoveAll", "Rename"}, []string{"Stat", "ReadFile", "ReadDir"}},
		{"row lock", "", `SELECT 1 FROM memtool_entries WHERE tenant = '' AND parent = '' AND name = 'kept' FOR UPDATE`, nil,
			[]string{"Update"}, []string{"Stat", "ReadFile", "ReadDir", "WriteFile", "Mkdir"}},
		{"table lock", "", `LOCK TABLE memtool_entries IN ACCESS EXCLUSIVE MODE`, nil,
			[]string{"Stat", "ReadFile", "ReadDir", "WriteFile", "Update"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := pgtest.URL(t)
			root := openWith(t, url, short)
			var s memtool.Store = root
			if c.tenant != "" {
				var err error
				if s, err = root.Tenant(ctx, c.tenant); err != nil {
					t.Fatal(err)
				}
				neighbour, err := root.Tenant(ctx, "neighbour")
				if err != nil {
					t.Fatal(err)
				}
				storeops.Seed(t, neighbour)
				defer func() {
					if err := neighbour.WriteFile(ctx, "new", nil, memtool.CreateOnly); err != nil {
						t.Errorf("a neighbour tenant's write while the tenant's lock is held: %v", err)
					}
				}()
			}
			storeops.Seed(t, s)
			tx := holderTx(t, url)
			if _, err := tx.Exec(ctx, c.lock, c.args...); err != nil {
				t.Fatal(err)
			}
			byName := map[string]int{}
			for i, op := range ops {
				byName[op.Name] = i
			}
			for _, name := range c.busy {
				op := ops[byName[name]]
				start := time.Now()
				err := storetest.Answer(t, name, func() error { return op.Run(ctx, s) })
				if !errors.Is(err, memtool.ErrBusy) {
					t.Errorf("%s while the %s is held: %v, want ErrBusy", name, c.name, err)
				}
				if waited := time.Since(start); waited < short.LockTimeout {
					t.Errorf("%s gave up after %v, before the lock timeout %v", name, waited, short.LockTimeout)
				}
			}
			for _, name := range c.free {
				op := ops[byName[name]]
				if err := storetest.Answer(t, name, func() error { return op.Run(ctx, s) }); err != nil {
					t.Errorf("%s while the %s is held: %v", name, c.name, err)
				}
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			for _, name := range c.busy {
				op := ops[byName[name]]
				if op.Write && op.Done(ctx, s) {
					t.Errorf("%s failed with ErrBusy but made its change", name)
				}
				if err := storetest.Answer(t, name, func() error { return op.Run(ctx, s) }); err != nil {
					t.Errorf("%s once the %s is released: %v", name, c.name, err)
				}
			}
		})
	}
}

// TestHeldMigrationLock holds the lock migrations take: Open of a new
// database fails with ErrBusy after the lock timeout, and Open of a
// database whose schema is current does not wait for it.
func TestHeldMigrationLock(t *testing.T) {
	ctx := context.Background()
	current := pgtest.URL(t)
	openWith(t, current, short)
	fresh := pgtest.URL(t)
	tx := holderTx(t, fresh)
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgstore.MigrationLock)); err != nil {
		t.Fatal(err)
	}
	err := storetest.Answer(t, "Open", func() error {
		s, err := pgstore.Open(ctx, fresh, &short)
		if err == nil {
			s.Close()
		}
		return err
	})
	if !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("Open of a new database while another process migrates: %v, want ErrBusy", err)
	}
	if err := storetest.Answer(t, "Open", func() error {
		s, err := pgstore.Open(ctx, current, &short)
		if err == nil {
			s.Close()
		}
		return err
	}); err != nil {
		t.Errorf("Open of a current database while another process migrates: %v", err)
	}
}

// TestEndedSessions ends the store's sessions from another connection, as
// a restart of the server does, again and again: the next method works
// each time, and a write tried again on a new connection is done once.
func TestEndedSessions(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	app := fmt.Sprintf("memtool_test_ended_%d", time.Now().UnixNano())
	s := openWith(t, url+"&application_name="+app, pgstore.Options{})
	if err := s.WriteFile(ctx, "log", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, url)
	const rounds = 10
	want := ""
	for i := range rounds {
		if endSessions(t, admin, app) == 0 {
			t.Errorf("round %d: the store has no session to end", i)
		}
		line := fmt.Sprintf("line %d\n", i)
		if err := s.Update(ctx, "log", 1<<20, func(old []byte) ([]byte, error) { return append(old, line...), nil }); err != nil {
			t.Errorf("round %d: Update after the store's sessions ended: %v", i, err)
			continue
		}
		want += line
		endSessions(t, admin, app)
		if got, err := s.ReadFile(ctx, "log", 1<<20); err != nil || string(got) != want {
			t.Errorf("round %d: ReadFile after the store's sessions ended = %q, %v; want %q", i, got, err, want)
		}
	}
}

// endSessions ends the sessions named app, one by one (so that no other
// session can be ended by mistake), waiting until each has ended.
func endSessions(t *testing.T, admin *pgx.Conn, app string) int {
	t.Helper()
	ctx := context.Background()
	rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`, app)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	return len(pids)
}

// TestReadOnlySession opens the store in sessions that take no writes
// (default_transaction_read_only, as a standby server has): reads work,
// every write fails with ErrReadOnly; a database with no tables yet fails
// Open with ErrReadOnly.
func TestReadOnlySession(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	storeops.Seed(t, openWith(t, url, short))
	ro := openWith(t, url+"&default_transaction_read_only=on", short)
	for _, op := range ops {
		err := op.Run(ctx, ro)
		switch {
		case op.Write && !errors.Is(err, memtool.ErrReadOnly):
			t.Errorf("%s in a read-only session: %v, want ErrReadOnly", op.Name, err)
		case !op.Write && err != nil:
			t.Errorf("%s in a read-only session: %v", op.Name, err)
		}
	}
	storeops.CheckUnchanged(t, ro)

	// A database with tables but no tenancy mode yet: reads work without
	// claiming one.
	unclaimed := pgtest.URL(t)
	openWith(t, unclaimed, short)
	if _, err := openWith(t, unclaimed+"&default_transaction_read_only=on", short).ReadDir(ctx, ""); err != nil {
		t.Errorf("ReadDir of an unclaimed database in a read-only session: %v", err)
	}

	_, err := pgstore.Open(ctx, pgtest.URL(t)+"&default_transaction_read_only=on", &short)
	if !errors.Is(err, memtool.ErrReadOnly) {
		t.Errorf("Open of a new database in a read-only session: %v, want ErrReadOnly", err)
	}
}
