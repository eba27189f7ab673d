package filestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	mathrand "math/rand/v2"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

const (
	lockName    = ".memtool.lock"
	tempPrefix  = ".memtool-tmp-"
	trashPrefix = ".memtool-trash-"
	ownPrefix   = ".memtool"
)

// The lock file's mark, written in place over the same bytes so that
// marking needs no free space. Anything else than cleanMark at the start of
// a non-empty lock file (older versions wrote "pid N writing") is a writer
// at work, or one that died.
var (
	dirtyMark = []byte("dirty\n")
	cleanMark = []byte("clean\n")
)

// DefaultBusyTimeout is how long a write waits for the lock when
// Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// Options configure a Store. The zero value (or nil) means the defaults.
type Options struct {
	// BusyTimeout is how long a write waits for the store's lock while
	// another writer holds it, before it fails with memtool.ErrBusy. Zero
	// means DefaultBusyTimeout; a negative value means one try, no wait.
	BusyTimeout time.Duration
	// Logger receives what the store could not do and carried on without
	// (leftovers of a crashed writer it could not remove, a lock file it
	// could not use). Default slog.Default().
	Logger *slog.Logger
}

// Store is a memtool.Store in a local directory. It implements
// memtool.Renamer, memtool.RemoveAller, memtool.Tenanted and
// memtool.TenantLister.
type Store struct {
	dir  string
	root *os.Root
	self *os.File // the store's directory, read-only: its flock is the write lock
	turn chan struct{}
	busy time.Duration
	log  *slog.Logger
	opts Options // what the tenants' stores are opened with

	owner *Store      // the store this one is a tenant of; nil if none
	multi atomic.Bool // the directory has tenants (for good): the tenant-less view refuses

	mu      sync.Mutex
	tenants map[string]*Store // the tenants' stores opened so far, which Close closes
	closed  bool
}

var (
	_ memtool.Store        = (*Store)(nil)
	_ memtool.Renamer      = (*Store)(nil)
	_ memtool.RemoveAller  = (*Store)(nil)
	_ memtool.Tenanted     = (*Store)(nil)
	_ memtool.TenantLister = (*Store)(nil)
)

// Open opens the store in dir with the default options; see OpenWith.
func Open(dir string) (*Store, error) { return OpenWith(dir, nil) }

// OpenWith opens the store in dir, creating the directory (0700) if it is
// missing. opts may be nil. It fails only if the directory cannot be
// created or opened: on a read-only file system, or a directory this
// process may not write, it opens for reading (writes fail with
// memtool.ErrReadOnly).
//
// If a writer was interrupted (its mark is still in the lock file) and no
// writer holds the lock now, OpenWith sweeps the temp files and trash it
// may have left, as far as it can, logs what it could not remove, and
// clears the mark. Otherwise it does not walk the tree, so opening costs
// the same whatever the store holds. It never waits for the lock.
func OpenWith(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	return newStore(dir, root, o)
}

// newStore opens the store whose directory root is open on, taking root
// over, and recovers it.
func newStore(dir string, root *os.Root, o Options) (*Store, error) {
	self, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("filestore: %w", err)
	}
	s := &Store{dir: dir, root: root, self: self, turn: make(chan struct{}, 1), busy: o.BusyTimeout, log: o.Logger, opts: o}
	s.recover()
	return s, nil
}

// Close releases the directory and the stores of the tenants that Tenant
// opened. The store of a tenant belongs to the store it came from: its own
// Close does nothing.
func (s *Store) Close() error {
	if s.owner != nil {
		return nil
	}
	s.mu.Lock()
	tenants := s.tenants
	s.tenants, s.closed = nil, true
	s.mu.Unlock()
	var errs []error
	for _, t := range tenants {
		errs = append(errs, t.release())
	}
	return errors.Join(append(errs, s.release())...)
}

func (s *Store) release() error {
	return errors.Join(s.self.Close(), s.root.Close())
}

// Dir returns the directory the store was opened on.
func (s *Store) Dir() string { return s.dir }

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
	f, err := s.root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	switch {
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

func (h *held) unlock() {
	if h.file != nil {
		h.file.Close() // drops its flock
	}
	withFd(h.s.self, func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
	<-h.s.turn
}

// takeTurn waits for this process's other writers.
func (s *Store) takeTurn(ctx context.Context, deadline time.Time) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("filestore: waiting for the lock: %w", ctx.Err())
	case <-t.C:
		return errBusy
	}
}

var errBusy = fmt.Errorf("filestore: another writer holds the lock: %w", memtool.ErrBusy)

// flockWait takes an exclusive flock on f, trying again with growing,
// jittered pauses until deadline or ctx's end.
func flockWait(ctx context.Context, f *os.File, deadline time.Time) error {
	pause := 100 * time.Microsecond
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
		t := time.NewTimer(min(pause/2+mathrand.N(pause), left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("filestore: waiting for the lock: %w", ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// acquire takes the write lock for a change of name by op, checks under it
// that the directory has no tenants (see checkTenancy), and marks the lock
// file as "writer at work" until the returned release runs. A mark found
// at Open with the lock free means a writer died mid-change and left
// debris to sweep. The mark
// overwrites bytes the lock file already has, so a full disk does not stop
// it; if it cannot be written at all (no lock file, a read-only store),
// the writer goes on unmarked: the mark only decides whether Open sweeps.
func (s *Store) acquire(ctx context.Context, op, name string) (func(), error) {
	h, err := s.lock(ctx, s.busy)
	if err != nil {
		return nil, err
	}
	if err := s.checkTenancy(op, name); err != nil {
		h.unlock()
		return nil, err
	}
	marked := h.file != nil && writeMark(h.file, dirtyMark) == nil
	return func() {
		if marked {
			writeMark(h.file, cleanMark)
		}
		h.unlock()
	}, nil
}

func writeMark(f *os.File, mark []byte) error {
	_, err := f.WriteAt(mark, 0)
	return err
}

func isDirty(mark []byte) bool {
	return len(mark) > 0 && !bytes.HasPrefix(mark, cleanMark)
}

// recover runs at Open. If the lock is free and the lock file holds a
// mark, its writer died mid-change: sweep what it left and clear the mark.
// A lock file without bytes gets its clean mark, so that marking later
// needs no space. recover never fails Open: what it cannot do, it logs.
func (s *Store) recover() {
	h, err := s.lock(context.Background(), -1)
	if errors.Is(err, memtool.ErrBusy) {
		return // a live writer: the mark is its own
	}
	if err != nil {
		s.log.Warn("filestore: cannot take the lock to check for an interrupted writer", "dir", s.dir, "err", err)
		return
	}
	defer h.unlock()
	if h.file == nil {
		if mark, err := s.root.ReadFile(lockName); err == nil && isDirty(mark) {
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
	if n > 0 && !isDirty(mark[:n]) {
		return
	}
	if isDirty(mark[:n]) {
		if err := s.sweepLocked(); err != nil {
			s.log.Warn("filestore: some leftovers of an interrupted writer could not be removed; they stay hidden from the model", "dir", s.dir, "err", err)
		}
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
		if p == tenantsDir {
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

// mapErr turns an OS error into memtool's error classes, keeping the detail.
func mapErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var class error
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		class = memtool.ErrNotExist
	case errors.Is(err, syscall.ENOTEMPTY): // before ErrExist, which ENOTEMPTY also matches
		class = memtool.ErrNotEmpty
	case errors.Is(err, fs.ErrExist):
		class = memtool.ErrExist
	case errors.Is(err, syscall.ELOOP), isEscape(err):
		class = memtool.ErrEscapes
	case errors.Is(err, syscall.EISDIR):
		class = memtool.ErrIsDir
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		class = memtool.ErrNoSpace
	case errors.Is(err, syscall.EROFS):
		class = memtool.ErrReadOnly
	case writes(op) && errors.Is(err, fs.ErrPermission):
		// A directory this process may not write, or an immutable entry:
		// read-only to this store.
		class = memtool.ErrReadOnly
	default:
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%v)", class, err)}
}

// writes reports whether op changes the store (a failed permission check
// there means the store, or that part of it, is read-only to us).
func writes(op string) bool {
	switch op {
	case "write", "update", "mkdir", "remove", "removeall", "rename":
		return true
	}
	return false
}

// isEscape recognises os.Root's refusal of a path or link that leaves it.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

func classErr(op, name string, class error) error {
	return &fs.PathError{Op: op, Path: name, Err: class}
}

// info converts an os.FileInfo; regular files with several links are irregular.
func info(name string, fi fs.FileInfo) memtool.FileInfo {
	out := memtool.FileInfo{Name: name}
	switch {
	case fi.IsDir():
		out.Type = fs.ModeDir
	case fi.Mode().IsRegular() && nlink(fi) <= 1:
		out.Size = fi.Size()
	default:
		out.Type = fs.ModeIrregular
	}
	return out
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

func rootName(name string) string {
	if name == "" {
		return "."
	}
	return name
}

func split(name string) (dir, base string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return memtool.FileInfo{}, err
	}
	if err := s.checkTenancy("stat", name); err != nil {
		return memtool.FileInfo{}, err
	}
	fi, err := s.root.Stat(rootName(name))
	if err != nil {
		return memtool.FileInfo{}, mapErr("stat", name, err)
	}
	_, base := split(name)
	if fi.IsDir() && !s.listable(name) {
		return memtool.FileInfo{Name: base, Type: fs.ModeIrregular}, nil
	}
	return info(base, fi), nil
}

// listable reports whether this process may read and search the directory
// name (reached through the root). One it may not is reported as irregular,
// so that a listing leaves it out instead of failing on it.
func (s *Store) listable(name string) bool {
	d, err := s.root.Open(rootName(name))
	if err != nil {
		return false
	}
	defer d.Close()
	return withFd(d, func(fd int) error { return unix.Faccessat(fd, ".", unix.R_OK|unix.X_OK, unix.AT_EACCESS) }) == nil
}

// openRegular opens a regular file for reading without blocking on FIFOs
// and checks, on the open descriptor, that it is a regular, singly linked
// file of at most limit bytes.
func (s *Store) openRegular(op, name string, limit int64) (*os.File, int64, error) {
	fi, err := s.root.Stat(rootName(name))
	if err != nil {
		return nil, 0, mapErr(op, name, err)
	}
	if err := checkRegular(op, name, fi, limit); err != nil {
		return nil, 0, err
	}
	f, err := s.root.OpenFile(rootName(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, mapErr(op, name, err)
	}
	fi, err = f.Stat()
	if err == nil {
		err = checkRegular(op, name, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

func checkRegular(op, name string, fi fs.FileInfo, limit int64) error {
	switch {
	case fi.IsDir():
		return classErr(op, name, memtool.ErrIsDir)
	case !fi.Mode().IsRegular() || nlink(fi) > 1:
		return classErr(op, name, memtool.ErrIrregular)
	case fi.Size() > limit:
		return classErr(op, name, memtool.ErrTooLarge)
	}
	return nil
}

func (s *Store) readFile(op, name string, limit int64) ([]byte, error) {
	f, size, err := s.openRegular(op, name, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, 0, size+1)
	data, err = readAll(io.LimitReader(f, limit+1), data)
	if err != nil {
		return nil, mapErr(op, name, err)
	}
	if int64(len(data)) > limit {
		return nil, classErr(op, name, memtool.ErrTooLarge)
	}
	return data, nil
}

func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkTenancy("read", name); err != nil {
		return nil, err
	}
	return s.readFile("read", name, limit)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkTenancy("readdir", name); err != nil {
		return nil, err
	}
	d, err := s.root.Open(rootName(name))
	if err != nil {
		return nil, mapErr("readdir", name, err)
	}
	defer d.Close()
	if fi, err := d.Stat(); err != nil {
		return nil, mapErr("readdir", name, err)
	} else if !fi.IsDir() {
		return nil, classErr("readdir", name, memtool.ErrNotDir)
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, mapErr("readdir", name, err)
	}
	out := make([]memtool.FileInfo, 0, len(names))
	for _, n := range names {
		if strings.HasPrefix(n, ownPrefix) {
			continue
		}
		var st unix.Stat_t
		err := fstatat(d, n, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // vanished meanwhile
		case err != nil:
			// Seen but not examinable (EACCES in a directory we may read
			// but not search, EIO): there, but not usable.
			out = append(out, memtool.FileInfo{Name: n, Type: fs.ModeIrregular})
			continue
		}
		var e memtool.FileInfo
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			// Follow links only through the root, so that one leading out
			// reveals nothing (not even its target's size).
			p := path.Join(rootName(name), n)
			fi, err := s.root.Stat(p)
			if err != nil {
				continue
			}
			e = info(n, fi)
			if e.IsDir() && !s.listable(p) {
				e.Type = fs.ModeIrregular
			}
		} else {
			e = infoFromStat(n, &st)
			if e.IsDir() && withFd(d, func(dfd int) error {
				return unix.Faccessat(dfd, n, unix.R_OK|unix.X_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW)
			}) != nil {
				e.Type = fs.ModeIrregular
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func infoFromStat(name string, st *unix.Stat_t) memtool.FileInfo {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return memtool.FileInfo{Name: name, Type: fs.ModeDir}
	case unix.S_IFREG:
		if st.Nlink <= 1 {
			return memtool.FileInfo{Name: name, Size: st.Size}
		}
	}
	return memtool.FileInfo{Name: name, Type: fs.ModeIrregular}
}

// openDir opens the directory that holds name, through the root.
func (s *Store) openParent(op, name string) (*os.File, string, error) {
	dir, base := split(name)
	d, err := s.root.Open(rootName(dir))
	if err != nil {
		return nil, "", mapErr(op, name, err)
	}
	fi, err := d.Stat()
	if err != nil {
		d.Close()
		return nil, "", mapErr(op, name, err)
	}
	if !fi.IsDir() {
		d.Close()
		return nil, "", classErr(op, name, memtool.ErrNotDir)
	}
	return d, base, nil
}

func randomName(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// writeTemp writes data to a new temp file in d, fsyncs and closes it, and
// returns its name.
func writeTemp(d *os.File, data []byte) (string, error) {
	tmp := randomName(tempPrefix)
	var fd int
	err := withFd(d, func(dfd int) (err error) {
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		return err
	})
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		withFd(d, func(dfd int) error { return unix.Unlinkat(dfd, tmp, 0) })
		return "", err
	}
	return tmp, nil
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if name == "" {
		return classErr("write", name, memtool.ErrIsDir)
	}
	unlock, err := s.acquire(ctx, "write", name)
	if err != nil {
		return err
	}
	defer unlock()
	d, base, err := s.openParent("write", name)
	if err != nil {
		return err
	}
	defer d.Close()
	if mode == memtool.Replace {
		// What Stat would report: links followed through the root, several
		// hard links irregular.
		fi, err := s.root.Stat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return mapErr("write", name, err)
		case fi.IsDir():
			return classErr("write", name, memtool.ErrIsDir)
		case info(base, fi).Type != 0:
			return classErr("write", name, memtool.ErrIrregular)
		}
	}
	return s.commit(d, "write", name, base, data, mode == memtool.CreateOnly)
}

// commit writes data to a temp file in d and renames it to base, without
// replacing anything when noReplace is set, then fsyncs d.
func (s *Store) commit(d *os.File, op, name, base string, data []byte, noReplace bool) error {
	tmp, err := writeTemp(d, data)
	if err != nil {
		return mapErr(op, name, err)
	}
	err = withFd(d, func(dfd int) error {
		if noReplace {
			return renameNoReplace(dfd, tmp, dfd, base)
		}
		return unix.Renameat(dfd, tmp, dfd, base)
	})
	if err != nil {
		withFd(d, func(dfd int) error { return unix.Unlinkat(dfd, tmp, 0) })
		return mapErr(op, name, err)
	}
	if err := d.Sync(); err != nil {
		return mapErr(op, name, err)
	}
	return nil
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	unlock, err := s.acquire(ctx, "update", name)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := s.readFile("read", name, limit)
	if err != nil {
		return err
	}
	updated, err := fn(old)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d, base, err := s.openParent("update", name)
	if err != nil {
		return err
	}
	defer d.Close()
	return s.commit(d, "update", name, base, updated, false)
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	if name == "" {
		return classErr("mkdir", name, memtool.ErrExist)
	}
	unlock, err := s.acquire(ctx, "mkdir", name)
	if err != nil {
		return err
	}
	defer unlock()
	d, base, err := s.openParent("mkdir", name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := withFd(d, func(dfd int) error { return unix.Mkdirat(dfd, base, 0o700) }); err != nil {
		return mapErr("mkdir", name, err)
	}
	return mapErr("mkdir", name, d.Sync())
}

func (s *Store) Remove(ctx context.Context, name string) error {
	if name == "" {
		return classErr("remove", name, fs.ErrInvalid)
	}
	unlock, err := s.acquire(ctx, "remove", name)
	if err != nil {
		return err
	}
	defer unlock()
	d, base, err := s.openParent("remove", name)
	if err != nil {
		return err
	}
	defer d.Close()
	err = withFd(d, func(dfd int) error {
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		flags := 0
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			flags = unix.AT_REMOVEDIR
		}
		return unix.Unlinkat(dfd, base, flags)
	})
	if err != nil {
		return mapErr("remove", name, err)
	}
	return mapErr("remove", name, d.Sync())
}

// RemoveAll removes a file or a whole directory. A directory is first
// renamed to a hidden trash name in one atomic step, so that a crash leaves
// it either in place or gone (Open's recovery finishes the removal).
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	if name == "" {
		return classErr("removeall", name, fs.ErrInvalid)
	}
	unlock, err := s.acquire(ctx, "removeall", name)
	if err != nil {
		return err
	}
	defer unlock()
	d, base, err := s.openParent("removeall", name)
	if err != nil {
		return err
	}
	defer d.Close()
	trash := randomName(trashPrefix)
	if err := withFd(d, func(dfd int) error { return unix.Renameat(dfd, base, dfd, trash) }); err != nil {
		return mapErr("removeall", name, err)
	}
	if err := d.Sync(); err != nil {
		return mapErr("removeall", name, err)
	}
	dir, _ := split(name)
	if err := s.root.RemoveAll(path.Join(rootName(dir), trash)); err != nil {
		// The entry is gone for every reader; the sweep retries the rest.
		return nil
	}
	return nil
}

func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if oldname == "" || newname == "" || strings.HasPrefix(newname+"/", oldname+"/") {
		return classErr("rename", oldname, fs.ErrInvalid)
	}
	unlock, err := s.acquire(ctx, "rename", oldname)
	if err != nil {
		return err
	}
	defer unlock()
	od, obase, err := s.openParent("rename", oldname)
	if err != nil {
		return err
	}
	defer od.Close()
	nd, nbase, err := s.openParent("rename", newname)
	if err != nil {
		return err
	}
	defer nd.Close()
	err = withFd(od, func(ofd int) error {
		return withFd(nd, func(nfd int) error { return renameNoReplace(ofd, obase, nfd, nbase) })
	})
	if err != nil {
		return mapErr("rename", oldname, err)
	}
	if err := nd.Sync(); err != nil {
		return mapErr("rename", newname, err)
	}
	return mapErr("rename", oldname, od.Sync())
}

// withFd runs fn with the descriptor of d, keeping d alive meanwhile.
func withFd(d *os.File, fn func(fd int) error) error {
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func fstatat(d *os.File, name string, st *unix.Stat_t, flags int) error {
	return withFd(d, func(dfd int) error { return unix.Fstatat(dfd, name, st, flags) })
}
