package sqlitestore_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/childproc"
	"github.com/memtool/memtool/internal/sqltree/sqltreetest"
	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

// holdEnv, set to a database file, makes the test binary the other process
// of the lock tests (see TestMain).
const holdEnv = "SQLITESTORE_TEST_HOLD_WRITE_LOCK"

// TestMain lets the test binary serve as another process: with $holdEnv
// set it takes that file's write lock, prints "held", and keeps the lock
// until its standard input closes.
func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		if err := holdUntilStdinCloses(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func holdUntilStdinCloses(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return tx.Commit()
}

// A lockHolder takes the write lock of the database file at path, from
// outside the store under test, and returns the function that releases it
// (also called when the test ends).
type lockHolder func(t *testing.T, path string) (release func())

var holders = []struct {
	name string
	hold lockHolder
}{
	{"connection", holdInConnection},
	{"process", holdInProcess},
}

// eachHolder runs test in a subtest for each lock holder, with the path
// of a database file in a new directory.
func eachHolder(t *testing.T, test func(t *testing.T, hold lockHolder, path string)) {
	for _, h := range holders {
		t.Run(h.name, func(t *testing.T) { test(t, h.hold, filepath.Join(t.TempDir(), "m.db")) })
	}
}

// busyTimeout is the busy timeout of the stores the lock tests wait out.
const busyTimeout = 200 * time.Millisecond

// holdInConnection holds the lock in a BEGIN IMMEDIATE transaction of a
// second connection of this process.
func holdInConnection(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	release := func() {
		tx.Commit()
		db.Close()
	}
	t.Cleanup(release)
	return release
}

// holdInProcess holds the lock in another process (this test binary, see
// TestMain).
func holdInProcess(t *testing.T, path string) func() {
	t.Helper()
	cmd, stdin, stdout := childproc.Spawn(t, holdEnv, path)
	release := func() {
		stdin.Close()
		cmd.Wait()
	}
	t.Cleanup(release)
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		said <- line
	}()
	select {
	case line := <-said:
		if line != "held\n" {
			t.Fatalf("the lock holder process said %q", line)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the lock holder process did not take the lock within a minute")
	}
	return release
}

// writes are the store's write methods, each writing something new at a
// name of its own (seeded by storeops.Seed) so that what a busy one did
// not do can be checked afterwards.
var writes = storeops.Writes()

// TestHeldWriteLock holds the file's write lock from another connection
// and from another process: every write fails with ErrBusy after the busy
// timeout and changes nothing, a store still opens and reads, a cancelled
// write ends with the context's error, and once the lock is released the
// writes succeed and nothing acknowledged is lost.
func TestHeldWriteLock(t *testing.T) {
	eachHolder(t, func(t *testing.T, hold lockHolder, path string) {
		ctx := context.Background()
		s := openWith(t, path, &sqlitestore.Options{BusyTimeout: busyTimeout})
		storeops.Seed(t, s)
		release := hold(t, path)

		other := openAnswered(t, path, &sqlitestore.Options{BusyTimeout: busyTimeout}, "while another holds the write lock")
		for _, st := range []*sqlitestore.Store{s, other} {
			if got, err := st.ReadFile(ctx, "kept", 100); err != nil || string(got) != "kept" {
				t.Errorf("ReadFile while another holds the write lock = %q, %v", got, err)
			}
			if _, err := st.ReadDir(ctx, "tree"); err != nil {
				t.Errorf("ReadDir while another holds the write lock: %v", err)
			}
		}

		for _, w := range writes {
			err := checkBusy(t, w.Name, "while another holds the write lock", func() error { return w.Run(ctx, s) })
			if w.Done(ctx, s) {
				t.Errorf("%s failed with %v but made its change", w.Name, err)
			}
		}

		// A cancelled write ends with the context's error, long before
		// the busy timeout of this store.
		patient := openWith(t, path, &sqlitestore.Options{BusyTimeout: time.Hour})
		sqltreetest.CancelledWrite(t, patient)

		release()
		for _, w := range writes {
			if err := storetest.Answer(t, w.Name, func() error { return w.Run(ctx, s) }); err != nil {
				t.Errorf("%s after the lock was released: %v", w.Name, err)
			}
			if !w.Done(ctx, other) {
				t.Errorf("%s after the lock was released: its change is not there", w.Name)
			}
		}
		if storeops.Exists(ctx, other, "cancelled") {
			t.Errorf("the cancelled write made its change")
		}
		if got, err := other.ReadFile(ctx, "moved", 100); err != nil || string(got) != "m" {
			t.Errorf("the acknowledged file moved = %q, %v; want m", got, err)
		}
	})
}

// TestBusyWithinProcess holds the store's write lock in one of its own
// transactions: another write of the same store waits no longer than the
// busy timeout either, and the transaction that held the lock commits.
func TestBusyWithinProcess(t *testing.T) {
	ctx := context.Background()
	s := openWith(t, filepath.Join(t.TempDir(), "m.db"), &sqlitestore.Options{BusyTimeout: busyTimeout})
	storeops.Seed(t, s)
	inside, proceed := make(chan struct{}), make(chan struct{})
	updated := make(chan error, 1)
	go func() {
		updated <- s.Update(ctx, "kept", 100, func([]byte) ([]byte, error) {
			close(inside)
			<-proceed
			return []byte("updated"), nil
		})
	}()
	<-inside
	checkBusy(t, "WriteFile", "while the store's own Update holds the lock", func() error {
		return s.WriteFile(ctx, "new", nil, memtool.CreateOnly)
	})
	close(proceed)
	if err := storetest.Answer(t, "Update", func() error { return <-updated }); err != nil {
		t.Fatalf("the Update that held the lock: %v", err)
	}
	if got, err := s.ReadFile(ctx, "kept", 100); err != nil || string(got) != "updated" {
		t.Errorf("after the Update: %q, %v", got, err)
	}
	if storeops.Exists(ctx, s, "new") {
		t.Errorf("the busy WriteFile made its change")
	}
}

// TestReadersShutOut holds the file in SQLite's exclusive locking mode,
// which shuts out readers too: opening the store fails with ErrBusy after
// the busy timeout, and works once the holder lets go.
func TestReadersShutOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openWith(t, path, nil)
	storeops.Seed(t, s)
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=locking_mode(EXCLUSIVE)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE memtool_meta SET value = value WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	checkBusy(t, "Open", "while another holds the file exclusively", openClose(path))
	db.Close()
	s = openWith(t, path, &sqlitestore.Options{BusyTimeout: busyTimeout})
	if got, err := s.ReadFile(ctx, "kept", 100); err != nil || string(got) != "kept" {
		t.Errorf("ReadFile after the holder closed: %q, %v", got, err)
	}
}

// TestHeldLockOnNewFile holds the lock of a database file not yet in WAL
// mode (a new file, as a second process finds it while the first turns
// it to WAL and makes the tables): SQLite does not wait to change the
// journal mode, but Open waits no shorter than the busy timeout before it
// fails with ErrBusy, and opens once the lock is released. Two processes
// opening a new file at once meet this.
func TestHeldLockOnNewFile(t *testing.T) {
	eachHolder(t, func(t *testing.T, hold lockHolder, path string) {
		ctx := context.Background()
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		release := hold(t, path)
		checkBusy(t, "Open", "of a new file while another holds its lock", openClose(path))
		release()
		s := openWith(t, path, &sqlitestore.Options{BusyTimeout: busyTimeout})
		if err := s.WriteFile(ctx, "x", []byte("y"), memtool.CreateOnly); err != nil {
			t.Errorf("WriteFile once the lock was released: %v", err)
		}
	})
}

// checkBusy runs call, the method named name, and checks that it fails
// with ErrBusy, and not before the busy timeout; what says what holds
// the lock, for the failure message. It returns call's error.
func checkBusy(t *testing.T, name, what string, call func() error) error {
	t.Helper()
	start := time.Now()
	err := storetest.Answer(t, name, call)
	if !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("%s %s: %v, want ErrBusy", name, what, err)
	}
	if waited := time.Since(start); waited < busyTimeout {
		t.Errorf("%s gave up after %v, before the busy timeout %v", name, waited, busyTimeout)
	}
	return err
}

// openClose opens the file at path with the busy timeout, and closes the
// store if it opened.
func openClose(path string) func() error {
	return func() error {
		s, err := sqlitestore.Open(path, &sqlitestore.Options{BusyTimeout: busyTimeout})
		if err == nil {
			s.Close()
		}
		return err
	}
}
