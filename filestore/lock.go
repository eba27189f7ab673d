// This file holds the write lock (this process's turn, then the flocks of
// the directory and the lock file), the crash mark in the lock file, and
// the recovery and Sweep that remove an interrupted writer's leftovers.

package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/wait"
)

// A held write lock. file is the lock file, open for writing, or nil when
// it could not be opened so (a read-only store; see lock).
type held struct {
	s    *Store
	file *os.File
}

// lock takes the write lock: this process's turn (a flock belongs to an
// open file, not to a goroutine), the flock of the store's directory, then
// the flock of the lock file, which versions before the directory's lock
// took alone. The directory cannot be deleted or replaced under a running
// writer as the lock file can, so it is the lock that holds. lock waits at
// most wait (negative: one try) and not past ctx's end, polling: a blocked
// flock could not be cancelled.
func (s *Store) lock(ctx context.Context, wait time.Duration) (*held, error) {
	return s.lockFile(ctx, wait, true)
}

// lockFile is lock; with create false a missing lock file is not made,
// and the lock is held without it (h.file nil).
func (s *Store) lockFile(ctx context.Context, wait time.Duration, create bool) (*held, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(max(wait, 0))
	if err := s.takeTurn(ctx, deadline); err != nil {
		return nil, err
	}
	if err := flockWait(ctx, s.self, deadline); err != nil {
		<-s.turn
		return nil, err
	}
	h := &held{s: s}
	f, err := s.openLockFile(create)
	switch {
	case !create && errors.Is(err, fs.ErrNotExist):
	case err == nil:
		if err := flockWait(ctx, f, deadline); err != nil {
			f.Close()
			h.unlock()
			return nil, err
		}
		h.file = f
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		// A read-only or full store: the write itself will say so, or
		// (delete, rename) need no space and work.
	default:
		s.log.Warn("filestore: the lock file cannot be used; writing without a crash mark", "dir", s.dir, "err", err)
	}
	return h, nil
}

// errNotLockFile refuses a lock file that is not a regular file of one name.
var errNotLockFile = errors.New("not a regular file of one link")

// openLockFile opens the lock file (creating it if create) in the
// store's directory itself rather than through the root, which would follow a link that
// stays inside despite O_NOFOLLOW; and it refuses, once open, anything but
// a regular file of (at most) one link. A lock file that is a link to a
// memory, or a second name of one, would otherwise be marked: the marks
// written over the memory's first bytes, and Open's recovery cutting it
// to a clean mark. O_NONBLOCK, which changes nothing for a regular file,
// spares the four fcntl calls with which os puts a descriptor into
// non-blocking mode and back to offer it to the poller (see
// openForListing), and a FIFO put there is not waited on. With create
// false, a missing lock file is an error wrapping fs.ErrNotExist.
func (s *Store) openLockFile(create bool) (*os.File, error) {
	flags := unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if create {
		flags |= unix.O_CREAT
	}
	fd := -1
	err := withFd(s.self, func(dfd int) error {
		for {
			var err error
			fd, err = unix.Openat(dfd, lockName, flags, 0o600)
			if err != unix.EINTR {
				return err
			}
		}
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: lockName, Err: err}
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: lockName, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink > 1 {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: lockName, Err: errNotLockFile}
	}
	return os.NewFile(uintptr(fd), lockName), nil
}

// readMark reads the lock file's mark for a store that cannot open it for
// writing, checking it as openLockFile does, without waiting on a FIFO.
func (s *Store) readMark() ([]byte, error) {
	var fd int
	err := withFd(s.self, func(dfd int) (err error) {
		fd, err = openNoFollow(dfd, lockName)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink > 1 {
		return nil, errNotLockFile
	}
	mark := make([]byte, len(cleanMark))
	n, err := unix.Pread(fd, mark, 0)
	if err != nil {
		return nil, err
	}
	return mark[:n], nil
}

func (h *held) unlock() {
	if h.file != nil {
		h.file.Close() // drops its flock
	}
	withFd(h.s.self, func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
	<-h.s.turn
}

// takeTurn waits for this process's other writers.
func (s *Store) takeTurn(ctx context.Context, deadline time.Time) error {
	switch err := wait.Turn(ctx, s.turn, deadline); {
	case errors.Is(err, wait.ErrDeadline):
		return errBusy
	case err != nil:
		return fmt.Errorf("filestore: waiting for the lock: %w", err)
	}
	return nil
}

var errBusy = fmt.Errorf("filestore: another writer holds the lock: %w", memtool.ErrBusy)

// Pauses between tries for a flock another process holds: from
// minFlockPause, doubling up to maxFlockPause. A writer holds the lock for
// tens of microseconds (a check and a rename; its fsyncs come before and
// after), so a waiter that slept longer would leave it free most of its
// sleep: with a 20 ms cap, four processes on one store did 8 % fewer
// commands in all (bench/parallel.md). SQLite's store polls the same way.
const (
	minFlockPause = 100 * time.Microsecond
	maxFlockPause = time.Millisecond
)

// nextFlockPause is the pause after pause.
func nextFlockPause(pause time.Duration) time.Duration {
	return min(2*pause, maxFlockPause)
}

// flockWait takes an exclusive flock on f, trying again with growing,
// jittered pauses (see minFlockPause) until deadline or ctx's end.
func flockWait(ctx context.Context, f *os.File, deadline time.Time) error {
	pause := minFlockPause
	for {
		err := withFd(f, func(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK:
			return fmt.Errorf("filestore: lock: %w", err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errBusy
		}
		if err := wait.Sleep(ctx, min(pause/2+mathrand.N(pause), left)); err != nil {
			return fmt.Errorf("filestore: waiting for the lock: %w", err)
		}
		pause = nextFlockPause(pause)
	}
}

// acquire takes the write lock for a change of name by op, checks under it
// that the directory has no tenants (see checkTenancy), and, if mark is
// set, marks the lock file as "writer at work" until the returned release
// runs; a holder that leaves nothing behind if it dies (it creates no
// named file) need not mark. A mark found
// at Open with the lock free means a writer died mid-change and left
// debris to sweep. The mark
// overwrites bytes the lock file already has, so a full disk does not stop
// it; if it cannot be written at all (no lock file, a read-only store),
// the writer goes on unmarked: the mark only decides whether Open sweeps.
func (s *Store) acquire(ctx context.Context, op, name string, mark bool) (func(), error) {
	h, err := s.lock(ctx, s.busy)
	if err != nil {
		return nil, err
	}
	if err := s.checkTenancy(op, name); err != nil {
		h.unlock()
		return nil, err
	}
	// A mark found now, with the lock held, is a dead writer's: it stays
	// (this writer neither rewrites nor clears it), so that the next Open
	// sweeps what that writer left.
	marked := mark && h.file != nil && !hasMark(h.file) && writeMark(h.file, dirtyMark) == nil
	return func() {
		if marked && !s.debris {
			writeMark(h.file, cleanMark)
		}
		s.debris = false
		h.unlock()
	}, nil
}

// leftDebris records, holding the lock, that op on name left debris it
// could not remove (a removed directory's rest): the writer's mark then
// stays in the lock file when it releases the lock, and the next Open
// sweeps the debris.
func (s *Store) leftDebris(op, name string, err error) {
	s.debris = true
	s.log.Warn("filestore: a change left debris it could not remove; it stays hidden until the next Open sweeps it", "dir", s.dir, "op", op, "name", name, "err", err)
}

func writeMark(f *os.File, mark []byte) error {
	_, err := f.WriteAt(mark, 0)
	return err
}

// hasMark reports whether the lock file f holds a writer's mark.
func hasMark(f *os.File) bool {
	mark := make([]byte, len(cleanMark))
	n, _ := f.ReadAt(mark, 0)
	return isDirty(mark[:n])
}

func isDirty(mark []byte) bool {
	return len(mark) > 0 && !bytes.HasPrefix(mark, cleanMark)
}

// recover runs at Open. If the lock is free and the lock file holds a
// mark, its writer died mid-change: sweep what it left and clear the mark.
// Otherwise it writes nothing: Open, and so every read, leaves the
// directory as it was. A missing lock file is not made (a writer makes it
// before it marks, so there is no mark to find), and one without bytes
// gets them from its first marking writer. recover never fails Open: what
// it cannot do, it logs.
func (s *Store) recover() {
	h, err := s.lockFile(context.Background(), -1, false)
	if errors.Is(err, memtool.ErrBusy) {
		return // a live writer: the mark is its own
	}
	if err != nil {
		s.log.Warn("filestore: cannot take the lock to check for an interrupted writer", "dir", s.dir, "err", err)
		return
	}
	defer h.unlock()
	if h.file == nil {
		if mark, err := s.readMark(); err == nil && isDirty(mark) {
			s.log.Warn("filestore: a writer was interrupted and the store cannot be written: its leftovers stay (hidden) until an Open that can write", "dir", s.dir)
		}
		return
	}
	mark := make([]byte, len(cleanMark))
	n, err := h.file.ReadAt(mark, 0)
	if err != nil && err != io.EOF {
		s.log.Warn("filestore: cannot read the lock file", "dir", s.dir, "err", err)
		return
	}
	if !isDirty(mark[:n]) {
		return
	}
	if err := s.sweepLocked(); err != nil {
		s.log.Warn("filestore: some leftovers of an interrupted writer could not be removed; they stay hidden from the model", "dir", s.dir, "err", err)
	}
	if err := writeMark(h.file, cleanMark); err == nil {
		h.file.Truncate(int64(len(cleanMark))) // an older version's longer mark
	}
}

// Sweep walks the whole tree and removes temp files and trash that an
// interrupted writer left behind; it leaves .memtool-tenants alone, since
// each tenant's store (see Tenant) sweeps its own. Open does this by
// itself after a crash of a process; Sweep is for the rare case where the
// machine lost power before the lock file's mark reached the disk, or
// where Open could not remove everything. The debris is invisible to the model either way; Sweep only
// reclaims the space. It removes what it can and returns an error naming
// (some of) what it could not.
func (s *Store) Sweep(ctx context.Context) error {
	h, err := s.lock(ctx, s.busy)
	if err != nil {
		return err
	}
	defer h.unlock()
	if err := s.sweepLocked(); err != nil {
		return fmt.Errorf("filestore: sweep: %w", err)
	}
	return nil
}

// sweepLocked removes temp files and trash anywhere in the tree, going on
// past what it cannot remove; it returns the first few failures.
func (s *Store) sweepLocked() error {
	const shown = 5
	var errs []error
	failed := 0
	fs.WalkDir(s.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable or vanished: nothing of ours to sweep there
		}
		if p == TenantsDir {
			return fs.SkipDir // each tenant's store sweeps its own
		}
		base := path.Base(p)
		if strings.HasPrefix(base, tempPrefix) || strings.HasPrefix(base, trashPrefix) {
			if err := s.root.RemoveAll(p); err != nil {
				if failed++; failed <= shown {
					errs = append(errs, err)
				}
			}
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if failed > shown {
		errs = append(errs, fmt.Errorf("and %d more", failed-shown))
	}
	return errors.Join(errs...)
}
