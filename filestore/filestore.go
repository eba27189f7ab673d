// Package filestore is a memtool.Store in a directory of the local file
// system: the embedded default, one file per memory.
//
// # Containment
//
// Every access goes through an os.Root opened on the directory, or through
// a directory descriptor that os.Root opened, with a single-component name.
// Symbolic links inside the directory are followed when they stay inside;
// links that lead out, loop or are absolute are refused (memtool.ErrEscapes).
// FIFOs, sockets, devices and regular files with more than one hard link are
// never opened for reading and are reported as memtool.ErrIrregular.
//
// # Durability
//
// A write goes to a temp file in the target's directory, which is fsynced,
// renamed over the target (create: renameat2 with RENAME_NOREPLACE, so two
// creates of one name never both win) and followed by an fsync of the
// directory; only then does the method return. A directory removal first
// renames the directory away, atomically, then deletes it. Leftover temp
// files and removed directories from a crashed process are swept when the
// store is next opened (a writer marks the lock file while it works; a mark
// left behind triggers the sweep). Files are created 0600 and directories 0700.
//
// # Concurrency
//
// Mutations hold an exclusive flock on the lock file .memtool.lock in the
// directory (and a mutex within the process), so several processes sharing
// one directory never lose an update. Reads take no lock: they see a file's
// old or new content, never a mix.
//
// Names starting with ".memtool" are the store's own; the path gate refuses
// them and ReadDir never returns them.
package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

const (
	lockName    = ".memtool.lock"
	tempPrefix  = ".memtool-tmp-"
	trashPrefix = ".memtool-trash-"
	ownPrefix   = ".memtool"
)

// Store is a memtool.Store in a local directory. It implements
// memtool.Renamer and memtool.RemoveAller.
type Store struct {
	dir  string
	root *os.Root
	mu   sync.Mutex // serialises this process's writers before the flock
	lock *os.File
}

var (
	_ memtool.Store       = (*Store)(nil)
	_ memtool.Renamer     = (*Store)(nil)
	_ memtool.RemoveAller = (*Store)(nil)
)

// Open opens the store in dir, creating the directory (0700) if it is
// missing. If a writer was interrupted (its mark is still in the lock file),
// Open sweeps the temp files and trash it may have left; otherwise it does
// not walk the tree, so opening costs the same whatever the store holds.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	lock, err := root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("filestore: lock file: %w", err)
	}
	s := &Store{dir: dir, root: root, lock: lock}
	if err := s.recover(); err != nil {
		s.Close()
		return nil, fmt.Errorf("filestore: sweep: %w", err)
	}
	return s, nil
}

// Close releases the directory.
func (s *Store) Close() error {
	return errors.Join(s.lock.Close(), s.root.Close())
}

// Dir returns the directory the store was opened on.
func (s *Store) Dir() string { return s.dir }

// acquire takes the write lock: the mutex, then the flock, and marks the
// lock file as "writer at work" until the returned release runs. A mark
// found at Open means a writer died mid-change and left debris to sweep.
func (s *Store) acquire(ctx context.Context) (func(), error) {
	release, err := s.flock(ctx)
	if err != nil {
		return nil, err
	}
	mark := fmt.Appendf(nil, "pid %d writing\n", os.Getpid())
	if _, err := unix.Pwrite(int(s.lock.Fd()), mark, 0); err != nil {
		release()
		return nil, fmt.Errorf("filestore: lock file: %w", err)
	}
	return func() {
		unix.Ftruncate(int(s.lock.Fd()), 0)
		release()
	}, nil
}

// flock takes the mutex, then the exclusive flock.
func (s *Store) flock(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	for {
		err := unix.Flock(int(s.lock.Fd()), unix.LOCK_EX)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			s.mu.Unlock()
			return nil, fmt.Errorf("filestore: lock: %w", err)
		}
	}
	return func() {
		unix.Flock(int(s.lock.Fd()), unix.LOCK_UN)
		s.mu.Unlock()
	}, nil
}

// recover sweeps the tree if the lock file holds a dead writer's mark.
func (s *Store) recover() error {
	release, err := s.flock(context.Background())
	if err != nil {
		return err
	}
	defer release()
	fi, err := s.lock.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	if err := s.sweepLocked(); err != nil {
		return err
	}
	return unix.Ftruncate(int(s.lock.Fd()), 0)
}

// Sweep walks the whole tree and removes temp files and trash that an
// interrupted writer left behind. Open does this by itself after a crash of
// a process; Sweep is for the rare case where the machine lost power before
// the lock file's mark reached the disk. The debris is invisible to the
// model either way; Sweep only reclaims the space.
func (s *Store) Sweep(ctx context.Context) error {
	release, err := s.flock(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.sweepLocked()
}

// sweepLocked removes temp files and trash anywhere in the tree.
func (s *Store) sweepLocked() error {
	return fs.WalkDir(s.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable or vanished: nothing of ours to sweep there
		}
		base := path.Base(p)
		switch {
		case strings.HasPrefix(base, tempPrefix), strings.HasPrefix(base, trashPrefix):
			if err := s.root.RemoveAll(p); err != nil {
				return err
			}
			if d.IsDir() {
				return fs.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			return nil
		}
		return nil
	})
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
	default:
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%v)", class, err)}
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
	fi, err := s.root.Stat(rootName(name))
	if err != nil {
		return memtool.FileInfo{}, mapErr("stat", name, err)
	}
	_, base := split(name)
	return info(base, fi), nil
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
	return s.readFile("read", name, limit)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := ctx.Err(); err != nil {
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
		if err := fstatat(d, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // vanished meanwhile
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			// Follow links only through the root, so that one leading out
			// reveals nothing (not even its target's size).
			fi, err := s.root.Stat(path.Join(rootName(name), n))
			if err != nil {
				continue
			}
			out = append(out, info(n, fi))
			continue
		}
		out = append(out, infoFromStat(n, &st))
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
	unlock, err := s.acquire(ctx)
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
	unlock, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := s.readFile("update", name, limit)
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
	unlock, err := s.acquire(ctx)
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
	unlock, err := s.acquire(ctx)
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
	unlock, err := s.acquire(ctx)
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
	unlock, err := s.acquire(ctx)
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
