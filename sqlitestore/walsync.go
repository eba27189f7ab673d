package sqlitestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/memtool/memtool"
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

// walSync makes a database file's commits durable: see above.
type walSync struct {
	path string // the database file; its WAL is path + "-wal"
	// syncData writes a file's data to the disk, with what is needed to
	// read it back (fdatasync where there is one, as SQLite's own syncs);
	// syncDir a directory's entries. Tests replace them.
	syncData, syncDir func(*os.File) error

	last atomic.Uint64 // the number of the last commit made

	mu      sync.Mutex // held by the goroutine that fsyncs
	synced  uint64     // commits numbered up to it are durable
	failed  uint64     // commits numbered up to it were to be made durable by an fsync that failed
	failErr error
	wal     *os.File    // the WAL file last synced, open; its directory is synced
	walInfo os.FileInfo // what it was when opened
}

// committed numbers a commit that was just made. It is called holding the
// one write connection, so commits are numbered in the order of their
// frames in the WAL.
func (w *walSync) committed() uint64 {
	return w.last.Add(1)
}

// durable returns once commit n (of committed) is on disk: at once if an
// fsync since it was made has returned; else it fsyncs the WAL for every
// commit made so far.
func (w *walSync) durable(n uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case n <= w.failed:
		return w.failErr
	case n <= w.synced:
		return nil
	}
	upTo := w.last.Load() // each of these made its COMMIT before it was numbered
	if err := w.syncWAL(); err != nil {
		w.failed = upTo
		w.failErr = fmt.Errorf("%w: the change was committed to %s, but the fsync that makes it durable failed: %w",
			memtool.ErrOutcomeUnknown, w.path, err)
		return w.failErr
	}
	w.synced = upTo
	return nil
}

// syncWAL fsyncs the WAL file, and its directory the first time it syncs
// that file (the file stays open for the next time, while it is still the
// one at the path). Without a WAL file, SQLite has checkpointed it into
// the database file (as it does when the last connection to the file
// closes) and removed it: the database file is synced instead. Should the
// WAL file be replaced between the look and the fsync, the one synced was
// checkpointed into the database file, which SQLite fsyncs before it
// removes a WAL file.
func (w *walSync) syncWAL() error {
	name := w.path + "-wal"
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w.syncPath(w.path, w.syncData)
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
