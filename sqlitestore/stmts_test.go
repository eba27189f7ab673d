package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
)

// cached returns the queries that c has statements for, and those noted
// for the next write to prepare.
func cached(c *stmts) (prepared, pending []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		if st != nil {
			prepared = append(prepared, q)
		}
	}
	return prepared, slices.Clone(c.pending)
}

// openStmts opens a store in a new file, closed when t ends.
func openStmts(t *testing.T, opts *Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "m.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestWritesPrepareWhatTheWritesBeforeThemRan(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A new store's first change claims its tenancy in a write of its own.
	if err := s.WriteFile(ctx, "first.md", nil, memtool.Replace); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A command on it, as memtool runs one per process.
	s, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.WriteFile(ctx, "a.md", []byte("one"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	prepared, pending := cached(s.db.ws)
	if len(pending) == 0 {
		t.Fatal("a write noted no query for the next write to prepare")
	}
	if len(prepared) != 0 {
		t.Errorf("a store's first write prepared %q: a one-shot command would pay for statements it never runs", prepared)
	}
	first := pending
	if err := s.WriteFile(ctx, "b.md", []byte("two"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	prepared, pending = cached(s.db.ws)
	for _, q := range first {
		if !slices.Contains(prepared, q) {
			t.Errorf("the second write did not prepare %q, which the first ran (prepared: %q)", q, prepared)
		}
	}
	if len(pending) != 0 {
		t.Errorf("the second write, the same as the first, ran queries unprepared: %q", pending)
	}
	// The statements answer as the queries did.
	if err := s.WriteFile(ctx, "a.md", []byte("three"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.md": "three", "b.md": "two"} {
		got, err := s.ReadFile(ctx, name, 1<<20)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	if prepared, _ := cached(s.db.rs); len(prepared) == 0 {
		t.Error("reads prepared no statement")
	}
}

func TestStatementCacheIsBounded(t *testing.T) {
	s := openStmts(t, nil)
	ctx := context.Background()
	q := querier{stmts: s.db.rs}
	for i := range maxStmts + 10 {
		var n int
		if err := q.QueryRow(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d: %d, %v", i, n, err)
		}
	}
	if prepared, _ := cached(s.db.rs); len(prepared) != maxStmts {
		t.Errorf("the read pool keeps %d statements, want at most %d", len(prepared), maxStmts)
	}
	// A query past the bound still runs, and one that cannot be prepared
	// fails as it would unprepared, each time.
	for range 2 {
		if err := q.Exec(ctx, "SELECT nothing FROM nowhere"); err == nil {
			t.Fatal("a query of a missing table ran")
		}
	}
}

// A write's preparation waits for the write connection no longer than
// the write itself would: held by another write, it fails with ErrBusy
// at the busy timeout.
func TestPendingPreparationWaitsNoLongerThanTheWrite(t *testing.T) {
	s := openStmts(t, &Options{BusyTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	if err := s.WriteFile(ctx, "a.md", []byte("one"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	if _, pending := cached(s.db.ws); len(pending) == 0 {
		t.Fatal("nothing to prepare")
	}
	conn, err := s.db.w.Conn(ctx) // the one write connection, held
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.WriteFile(ctx, "b.md", []byte("two"), memtool.Replace)
	if !errors.Is(err, memtool.ErrBusy) {
		t.Errorf("a write while the connection is held: %v, want ErrBusy", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the write waited %v with a busy timeout of 200ms", d)
	}
	if _, pending := cached(s.db.ws); len(pending) == 0 {
		t.Error("queries that could not be prepared for now were forgotten")
	}
	conn.Close()
	if err := s.WriteFile(ctx, "b.md", []byte("two"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	if _, pending := cached(s.db.ws); len(pending) != 0 {
		t.Errorf("still pending once the connection was free: %q", pending)
	}
}

// Readers that ran at once leave their connections open for the next
// ones, up to idleReadConns: none is closed for being idle too many.
func TestConcurrentReadersKeepTheirConnections(t *testing.T) {
	s := openStmts(t, nil)
	ctx := context.Background()
	var all, done sync.WaitGroup
	all.Add(idleReadConns)
	for range idleReadConns {
		done.Add(1)
		go func() {
			defer done.Done()
			rows, err := s.db.r.QueryContext(ctx, "SELECT 1")
			all.Done()
			if err != nil {
				t.Error(err)
				return
			}
			all.Wait() // every reader holds a connection
			rows.Close()
		}()
	}
	done.Wait()
	st := s.db.r.Stats()
	if st.MaxIdleClosed != 0 || st.OpenConnections != idleReadConns {
		t.Errorf("after %d readers at once: %d connections open, %d closed as too many idle; want %d open, none closed",
			idleReadConns, st.OpenConnections, st.MaxIdleClosed, idleReadConns)
	}
}

// Writes of one store take the write connection in the order they asked
// for it: eight writes that queue behind a held turn, one after another,
// append to one file in that order.
func TestWritesTakeTurnsInOrder(t *testing.T) {
	s := openStmts(t, nil)
	ctx := context.Background()
	if err := s.WriteFile(ctx, "log.md", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s.db.turn <- struct{}{} // the turn, held
	const writes = 8
	errs := make(chan error, writes)
	for i := range writes {
		go func() {
			errs <- s.Update(ctx, "log.md", 1<<20, func(old []byte) ([]byte, error) {
				return fmt.Appendf(old, "%d ", i), nil
			})
		}()
		waitTurnWaiters(t, i+1)
	}
	<-s.db.turn
	for range writes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ReadFile(ctx, "log.md", 1<<20)
	if want := "0 1 2 3 4 5 6 7 "; err != nil || string(got) != want {
		t.Errorf("the writes appended %q, %v; want %q", got, err, want)
	}
}

// waitTurnWaiters waits until n goroutines wait for a write's turn, in
// the channel's queue.
func waitTurnWaiters(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a guard against a hang, not a timing
	buf := make([]byte, 1<<20)
	for {
		waiting := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			// Blocked in the select of takeTurn, not on its way there.
			if strings.Contains(g, " [select") && strings.Contains(g, "sqlitestore.(*db).takeTurn(") {
				waiting++
			}
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes do not wait for their turn", n)
		}
		runtime.Gosched()
	}
}

// An idle read connection is closed once it has been unused for
// readIdleTime.
func TestIdleReadConnectionsClose(t *testing.T) {
	defer func(d time.Duration) { readIdleTime = d }(readIdleTime)
	readIdleTime = 10 * time.Millisecond
	s := openStmts(t, nil)
	var n int
	if err := s.db.r.QueryRow("SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // a guard against a hang, not a timing
	for s.db.r.Stats().OpenConnections != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d read connections still open after a minute unused", s.db.r.Stats().OpenConnections)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
