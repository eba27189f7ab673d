package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/wait"
)

// A write is durable before its method returns, as with SQLite's
// synchronous=FULL, but its fsync is made once the file's write lock is
// released, so that writers of other goroutines and processes overlap
// theirs and one fsync serves every commit made before it.
//
// The connections run synchronous=NORMAL: a COMMIT writes its frames to
// the WAL, makes them visible and releases the lock, without an fsync.
// SQLite still fsyncs the WAL before a checkpoint copies its frames into
// the database file, the database file after it, and the WAL's header
// before the WAL is written again from its start (SQLite's documentation
// of synchronous=NORMAL in WAL mode). The store then fsyncs the WAL file
// itself, which writes every frame committed so far to the disk (a
// commit's frames are written in commit order, under the lock): past it,
// the commit is on disk in the WAL, or was checkpointed into a database
// file that SQLite fsynced first. A WAL file SQLite has newly made is not
// on disk until its directory is: SQLite would fsync the directory at its
// own first fsync of the file, which NORMAL defers to a checkpoint, so the
// store fsyncs the directory the first time it syncs a WAL file.
//
// What another reader may see: a commit is visible to other connections
// and processes as soon as it is made, before the fsync that makes it
// durable, as a write of the directory store is visible before its
// directory's fsync. The method that made it returns only after that
// fsync; should the fsync fail, it fails with memtool.ErrOutcomeUnknown
// (the change was made and may not survive a power loss), and so does
// every other commit that fsync was to make durable.
//
// A failed fsync is final for the store. On Linux a failed writeback
// marks the pages clean and reports its error once: the next fsync
// succeeds without writing them. The WAL's frames are checksummed in a
// chain, so recovery after a power loss stops at the first frame that did
// not reach the disk, and drops every later commit with it: no later
// fsync can make a later commit durable. So every commit made after the
// failure fails with memtool.ErrOutcomeUnknown too, and every write that
// has not committed yet is refused, changing nothing (refused), until
// the store is opened again. (A checkpoint would not mend it: it copies
// the frames from the page cache, or from the disk once they left it.)
//
// The WAL is the file SQLite names: the database file's path with every
// symbolic link resolved (Open resolves it), plus "-wal". SQLite removes
// it only when its last connection to the file closes, after a
// checkpoint it fsyncs, and the store keeps its write connection open
// until it closes: a WAL missing while the store is open (looked for
// where SQLite does not keep it, or deleted by another program) fails the
// fsync, which would otherwise acknowledge commits that are only in a
// file nobody fsynced. Once the store has begun to close, a missing WAL
// was checkpointed into the database file, which is fsynced instead.

// walSync makes a database file's commits durable: see above.
type walSync struct {
	path string // the database file, symbolic links resolved; its WAL is path + "-wal"
	// syncData writes a file's data to the disk, with what is needed to
	// read it back (fdatasync where there is one, as SQLite's own syncs);
	// syncDir a directory's entries. Tests replace them.
	syncData, syncDir func(*os.File) error

	// begun counts the COMMITs begun, last those ended (made or failed),
	// which are numbered in that order: a commit a read sees is numbered
	// at most begun once the read has returned (settle).
	begun, last atomic.Uint64
	closing     atomic.Bool           // the store is closing: a missing WAL was checkpointed
	refusal     atomic.Pointer[error] // once an fsync failed, why writes are refused

	mu      sync.Mutex  // held by the goroutine that fsyncs
	synced  uint64      // commits numbered up to it are durable
	failErr error       // the failed fsync's error, for every commit not yet durable
	wal     *os.File    // the WAL file last synced, open; its directory is synced
	walInfo os.FileInfo // what it was when opened
}

// commit runs fn, a COMMIT made holding the one write connection, and
// numbers it, made or failed: commits are numbered in the order of their
// frames in the WAL.
func (w *walSync) commit(fn func() error) (n uint64, err error) {
	w.begun.Add(1)
	defer func() { n = w.last.Add(1) }() // should fn panic too
	return 0, fn()
}

// committed numbers a commit made without commit (tests).
func (w *walSync) committed() uint64 {
	w.begun.Add(1)
	return w.last.Add(1)
}

// refused is the error of a write that has not committed, once an fsync
// has failed; nil before.
func (w *walSync) refused() error {
	if err := w.refusal.Load(); err != nil {
		return *err
	}
	return nil
}

// durable returns once commit n (of commit) is on disk: at once if an
// fsync since it was made has returned; else it fsyncs the WAL for every
// commit made so far. Once an fsync has failed, every commit not yet
// durable fails (see above).
func (w *walSync) durable(n uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case n <= w.synced:
		return nil
	case w.failErr != nil:
		return w.failErr
	}
	upTo := w.last.Load() // each of these ended its COMMIT before it was numbered
	if err := w.syncWAL(); err != nil {
		w.failErr = fmt.Errorf("%w: the change was committed to %s, but the fsync of its write-ahead log failed, so it may not survive a power loss: %w",
			memtool.ErrOutcomeUnknown, w.path, err)
		refusal := fmt.Errorf("%s takes no more writes: an fsync of its write-ahead log failed (%v), and a power loss may take back every commit made after it; nothing was changed; open the store again", w.path, err)
		w.refusal.Store(&refusal)
		return w.failErr
	}
	w.synced = upTo
	return nil
}

// settle returns once the commits a read that has returned may have seen
// are durable: those begun before its end, which it waits to be numbered
// (a matter of one COMMIT), or ctx's error.
func (w *walSync) settle(ctx context.Context) error {
	upTo := w.begun.Load()
	for w.last.Load() < upTo {
		if err := wait.Sleep(ctx, minBusyPause); err != nil {
			return err
		}
	}
	return w.durable(upTo)
}

// syncWAL fsyncs the WAL file, and its directory the first time it syncs
// that file (the file stays open for the next time, while it is still the
// one at the path). Without a WAL file once the store is closing, SQLite
// has checkpointed it into the database file (as it does when the last
// connection to the file closes) and removed it: the database file is
// synced instead; while the store is open, a missing WAL fails (see
// above). Should the WAL file be replaced between the look and the fsync,
// the one synced was checkpointed into the database file, which SQLite
// fsyncs before it removes a WAL file.
func (w *walSync) syncWAL() error {
	name := w.path + "-wal"
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && w.closing.Load():
		return w.syncPath(w.path, w.syncData)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the write-ahead log %s is missing while the store has the database open (SQLite removes it only when its last connection closes): the commits in it cannot be made durable", name)
	case err != nil:
		return err
	case w.wal != nil && os.SameFile(fi, w.walInfo):
		return w.syncData(w.wal)
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return err
	}
	if err := w.syncPath(filepath.Dir(w.path), w.syncDir); err != nil {
		f.Close()
		return err
	}
	w.closeWAL()
	w.wal, w.walInfo = f, fi
	return w.syncData(f)
}

// close closes the WAL file the store keeps open.
func (w *walSync) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeWAL()
}

func (w *walSync) closeWAL() {
	if w.wal != nil {
		w.wal.Close()
		w.wal, w.walInfo = nil, nil
	}
}

// syncPath syncs the file or directory at path with sync.
func (w *walSync) syncPath(path string, sync func(*os.File) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return sync(f)
}
