package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memtool/memtool"
)

// fsyncs is an Options.fsync that records what it syncs, and can hold
// the WAL's fsyncs until released or make them fail.
type fsyncs struct {
	mu      sync.Mutex
	names   []string
	hold    chan struct{} // non-nil: a WAL fsync waits until it is closed
	holding chan string   // a held fsync says so here
	fail    error         // a WAL fsync returns it
}

func (f *fsyncs) fsync(file *os.File) error {
	f.mu.Lock()
	f.names = append(f.names, filepath.Base(file.Name()))
	hold, fail := f.hold, f.fail
	f.mu.Unlock()
	if filepath.Ext(file.Name()) != ".db-wal" {
		return file.Sync()
	}
	if hold != nil {
		f.holding <- file.Name()
		<-hold
	}
	if fail != nil {
		return fail
	}
	return file.Sync()
}

// take returns the names synced since the last take.
func (f *fsyncs) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := f.names
	f.names = nil
	return names
}

func (f *fsyncs) set(hold chan struct{}, fail error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold, f.fail = hold, fail
}

func openSynced(t *testing.T) (*Store, *fsyncs, string) {
	t.Helper()
	f := &fsyncs{holding: make(chan string, 16)}
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := Open(path, &Options{fsync: f.fsync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// The first change also decides the store's tenancy, in a write of
	// its own: made here, the tests' writes are one commit each.
	if err := s.WriteFile(context.Background(), "first-change.md", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	return s, f, path
}

// holdWrite starts a write of name on s whose WAL fsync f holds; the write
// has committed when holdWrite returns. Its answer comes on the channel
// once release is called.
func holdWrite(s *Store, f *fsyncs, name string) (answer <-chan error, release func()) {
	hold := make(chan struct{})
	f.set(hold, nil)
	done := make(chan error, 1)
	go func() { done <- s.WriteFile(context.Background(), name, []byte("held"), memtool.CreateOnly) }()
	<-f.holding
	f.set(nil, nil)
	return done, func() { close(hold) }
}

// waitCommits waits until s has made n commits (writes that then wait for
// an fsync).
func waitCommits(t *testing.T, s *Store, n uint64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a guard against a hang, not a timing
	for s.db.wal.last.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d commits, want %d: the writes did not commit while an fsync ran", s.db.wal.last.Load(), n)
		}
		runtime.Gosched()
	}
}

// A write returns only once the WAL holding its commit is fsynced, after
// the write lock is released: another process sees the change before
// then (as the package doc says), and another write of the store can go
// ahead. The first sync of a WAL file syncs its directory first.
func TestWriteReturnsAfterItsWALSync(t *testing.T) {
	ctx := context.Background()
	s, f, path := openSynced(t)
	if got := f.take(); len(got) < 2 || got[0] != filepath.Base(filepath.Dir(path)) || got[1] != "m.db-wal" {
		t.Errorf("the schema's commit synced %q, want the directory, then the WAL", got)
	}
	hold := make(chan struct{})
	f.set(hold, nil)
	done := make(chan error, 1)
	go func() { done <- s.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly) }()
	if name := <-f.holding; name != path+"-wal" {
		t.Errorf("synced %s, want the WAL", name)
	}
	select {
	case err := <-done:
		t.Fatalf("WriteFile returned (%v) before its fsync", err)
	default:
	}
	other, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if data, err := other.ReadFile(ctx, "a.md", 1<<20); string(data) != "alpha" {
		t.Errorf("another store reads %q, %v before the fsync; want the commit", data, err)
	}
	f.set(nil, nil)
	if err := other.WriteFile(ctx, "b.md", []byte("beta"), memtool.CreateOnly); err != nil {
		t.Errorf("a write of another store, while the first one's fsync runs: %v", err)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.take()
	if err := s.WriteFile(ctx, "c.md", []byte("gamma"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if got := f.take(); len(got) != 1 || got[0] != "m.db-wal" {
		t.Errorf("a later write synced %q, want the WAL alone", got)
	}
}

// A write whose fsync fails says the change was made and may not last,
// and so does every write that fsync was to make durable. The failure is
// final: on Linux the next fsync succeeds without writing what the failed
// one lost, and WAL recovery would drop every commit after it, so later
// writes are refused, changing nothing, even once fsyncs work again, until
// the store is opened again.
func TestWALSyncFailure(t *testing.T) {
	ctx := context.Background()
	s, f, path := openSynced(t)
	f.set(nil, fmt.Errorf("fsync: %w", syscall.EIO))
	err := s.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly)
	if !errors.Is(err, memtool.ErrOutcomeUnknown) || !errors.Is(err, syscall.EIO) {
		t.Errorf("WriteFile with a failing fsync: %v, want ErrOutcomeUnknown and the fsync's error", err)
	}
	if data, err := s.ReadFile(ctx, "a.md", 1<<20); string(data) != "alpha" {
		t.Errorf("after it: %q, %v; the commit was made", data, err)
	}
	f.set(nil, nil) // the kernel reported the error once; the next fsync "succeeds"
	f.take()
	if err := s.WriteFile(ctx, "b.md", []byte("beta"), memtool.CreateOnly); err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("a write after the failure: %v, want a refusal that changed nothing", err)
	}
	if err := s.Mkdir(ctx, "d"); err == nil {
		t.Error("a mkdir after the failure succeeded, want a refusal")
	}
	if _, err := s.Stat(ctx, "b.md"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the refused write's file: %v, want ErrNotExist", err)
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("the refused writes synced %q", got)
	}
	again, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.WriteFile(ctx, "b.md", []byte("beta"), memtool.CreateOnly); err != nil {
		t.Errorf("a write of the store opened again: %v", err)
	}
}

// A write that commits while an fsync that then fails runs is not
// acknowledged once a later fsync succeeds: its frames follow those the
// failed fsync may have lost.
func TestCommitAfterAFailedFsyncFails(t *testing.T) {
	ctx := context.Background()
	s, f, _ := openSynced(t)
	hold := make(chan struct{})
	f.set(hold, syscall.EIO)
	first := make(chan error, 1)
	go func() { first <- s.WriteFile(ctx, "first.md", []byte("x"), memtool.CreateOnly) }()
	<-f.holding
	f.set(nil, nil) // fsyncs after the held one succeed
	before := s.db.wal.last.Load()
	later := make(chan error, 1)
	go func() { later <- s.WriteFile(ctx, "later.md", []byte("y"), memtool.CreateOnly) }()
	waitCommits(t, s, before+1)
	close(hold)
	if err := <-first; !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("the write whose fsync failed: %v, want ErrOutcomeUnknown", err)
	}
	if err := <-later; !errors.Is(err, memtool.ErrOutcomeUnknown) || !errors.Is(err, syscall.EIO) {
		t.Errorf("the write that committed during the failing fsync: %v, want ErrOutcomeUnknown and the fsync's error", err)
	}
}

// Writes that commit while another's fsync runs share the next one.
func TestConcurrentCommitsShareAnFsync(t *testing.T) {
	ctx := context.Background()
	s, f, _ := openSynced(t)
	first, release := holdWrite(s, f, "first.md")
	errs := make(chan error, 5)
	f.take()
	before := s.db.wal.last.Load()
	for i := range 5 {
		go func() { errs <- s.WriteFile(ctx, fmt.Sprintf("f%d.md", i), []byte("x"), memtool.CreateOnly) }()
	}
	waitCommits(t, s, before+5)
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := f.take(); len(got) != 1 {
		t.Errorf("5 writes that committed during an fsync made %d more: %q, want 1", len(got), got)
	}
}

// A write that commits nothing, but may rest on another's commit (a
// create that finds the name taken, an edit that changes nothing),
// answers only once that commit is durable.
func TestRefusalWaitsForTheCommitItSaw(t *testing.T) {
	ctx := context.Background()
	s, f, _ := openSynced(t)
	created, release := holdWrite(s, f, "a.md")
	refusals := make(chan error, 2)
	go func() { refusals <- s.WriteFile(ctx, "a.md", []byte("other"), memtool.CreateOnly) }()
	go func() {
		refusals <- s.Update(ctx, "a.md", 1<<20, func(old []byte) ([]byte, error) { return old, nil })
	}()
	// Not a timing: with the commit's fsync held, no answer may come, however long the wait.
	select {
	case err := <-refusals:
		t.Fatalf("answered (%v) while the commit it saw was not yet durable", err)
	case <-time.After(2 * time.Second):
	}
	release()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-refusals; err != nil && !errors.Is(err, memtool.ErrExist) {
			t.Errorf("after the fsync: %v, want the create's ErrExist or the unchanged edit's nil", err)
		}
	}
}

// A Mkdir that finds the name taken, in its read outside the write lock,
// answers only once the commit it may have seen is durable, as the
// refusals of writes do.
func TestMkdirOfATakenNameWaitsForItsCommit(t *testing.T) {
	ctx := context.Background()
	s, f, _ := openSynced(t)
	hold := make(chan struct{})
	f.set(hold, nil)
	made := make(chan error, 1)
	go func() { made <- s.Mkdir(ctx, "d") }()
	<-f.holding // the mkdir has committed; its fsync is held
	f.set(nil, nil)
	again := make(chan error, 1)
	go func() { again <- s.Mkdir(ctx, "d") }()
	// Not a timing: with the commit's fsync held, no answer may come, however long the wait.
	select {
	case err := <-again:
		t.Errorf("the second Mkdir answered (%v) while the commit it saw was not yet durable", err)
		again <- err
	case <-time.After(2 * time.Second):
	}
	close(hold) // not Fatal above: closing the store waits for the held fsync
	if err := <-made; err != nil {
		t.Fatal(err)
	}
	if err := <-again; !errors.Is(err, memtool.ErrExist) {
		t.Errorf("the second Mkdir, after the fsync: %v, want ErrExist", err)
	}
}

// An fsync that fails fails every commit it was to make durable: the
// writes that committed while another's fsync ran, and were to share the
// next one.
func TestWALSyncFailureFailsEveryCommitItCovers(t *testing.T) {
	ctx := context.Background()
	s, f, _ := openSynced(t)
	first, release := holdWrite(s, f, "first.md")
	before := s.db.wal.last.Load()
	errs := make(chan error, 3)
	for i := range 3 {
		go func() { errs <- s.WriteFile(ctx, fmt.Sprintf("f%d.md", i), []byte("x"), memtool.CreateOnly) }()
	}
	waitCommits(t, s, before+3)
	f.set(nil, syscall.EIO) // the next fsync, the one the three wait for
	f.take()
	release()
	if err := <-first; err != nil {
		t.Errorf("the held write, its own fsync passing: %v", err)
	}
	for range 3 {
		if err := <-errs; !errors.Is(err, memtool.ErrOutcomeUnknown) || !errors.Is(err, syscall.EIO) {
			t.Errorf("a write its fsync was to make durable: %v, want ErrOutcomeUnknown and the fsync's error", err)
		}
	}
	if got := f.take(); len(got) != 1 {
		t.Errorf("fsyncs after the release: %q, want the one failing for all three", got)
	}
}

// A WAL file made again, or replaced, is a new file whose directory is
// synced before it, once. Without a WAL file, a commit's fsync fails
// while the store is open (SQLite removes the file only when its last
// connection closes: it is not where the store looks, or was deleted),
// and syncs the database file (SQLite checkpointed the WAL into it, and
// fsynced it, before removing it) once the store is closing.
func TestWALSyncFollowsTheFileAtThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	if err := os.WriteFile(path, []byte("db"), 0o600); err != nil {
		t.Fatal(err)
	}
	var synced []string
	record := func(f *os.File) error {
		synced = append(synced, filepath.Base(f.Name()))
		return nil
	}
	newSync := func() *walSync {
		w := &walSync{path: path, syncData: record, syncDir: record}
		t.Cleanup(w.close)
		return w
	}
	w := newSync()
	step := func(what string, want ...string) {
		t.Helper()
		synced = nil
		if err := w.durable(w.committed()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(synced, want) {
			t.Errorf("%s: synced %q, want %q", what, synced, want)
		}
	}
	if err := os.WriteFile(path+"-wal", []byte("frames"), 0o600); err != nil {
		t.Fatal(err)
	}
	step("a new WAL file", filepath.Base(dir), "m.db-wal")
	step("the same WAL file", "m.db-wal")
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", []byte("frames again"), 0o600); err != nil {
		t.Fatal(err)
	}
	step("a WAL file made again", filepath.Base(dir), "m.db-wal")
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	synced = nil
	if err := w.durable(w.committed()); !errors.Is(err, memtool.ErrOutcomeUnknown) || len(synced) != 0 {
		t.Errorf("the WAL file removed while open: %v, synced %q; want ErrOutcomeUnknown, nothing synced", err, synced)
	}
	w = newSync()
	w.closing.Store(true)
	step("no WAL file, closing", "m.db")
}
