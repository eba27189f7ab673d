// This file holds the reads (Stat, ReadFile, ReadDir), which take no lock,
// and how they report links, irregular files and directories this process
// may not list.

package filestore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

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

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return memtool.FileInfo{}, err
	}
	if err := s.checkTenancy("stat", name); err != nil {
		return memtool.FileInfo{}, err
	}
	if fi, ok := s.statDirect(name); ok {
		return fi, nil
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
	d, err := s.openForListing(name)
	if err != nil {
		return false
	}
	defer d.Close()
	ok := false
	withFd(d, func(fd int) error { ok = listableAt(fd, "."); return nil })
	return ok
}

// openForListing opens the directory name (reached through the root) to
// read or search it. O_NONBLOCK spares the four fcntl calls with which
// os.Open puts a descriptor into non-blocking mode and back, only to find
// that the poller does not take a directory; it changes nothing for a
// directory. O_DIRECTORY refuses anything else (ENOTDIR) without opening
// it: a FIFO found where a directory should be is neither waited on nor
// let through to a writer waiting on it, and a device is not opened (see
// dirErr for the error).
func (s *Store) openForListing(name string) (*os.File, error) {
	return s.root.OpenFile(rootName(name), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
}

// dirErr is the error of op on name when the directory dir (name itself,
// or its parent) would not open for listing: something at dir that is not
// a directory is ErrNotDir, a path through a file ErrNotExist (mapErr).
func (s *Store) dirErr(op, name, dir string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) {
		if fi, serr := s.root.Stat(rootName(dir)); serr == nil && !fi.IsDir() {
			return classErr(op, name, memtool.ErrNotDir)
		}
	}
	return mapErr(op, name, err)
}

// openRegular opens a regular file for reading without blocking on FIFOs
// and checks, on the open descriptor, that it is a regular, singly linked
// file of at most limit bytes. It takes the short way (openDirect) where
// that can decide, and otherwise walks the path through the root twice:
// once to examine what is there (following links that stay inside), once
// to open it. direct says the short way decided.
func (s *Store) openRegular(op, name string, limit int64) (_ io.ReadCloser, size int64, direct bool, _ error) {
	if f, size, err, ok := s.openDirect(op, name, limit); ok {
		return f, size, true, err
	}
	fi, err := s.root.Stat(rootName(name))
	if err != nil {
		return nil, 0, false, mapErr(op, name, err)
	}
	if err := checkRegular(op, name, fi, limit); err != nil {
		if fi.IsDir() && !s.listable(name) {
			return nil, 0, false, classErr(op, name, memtool.ErrIrregular) // as Stat has it
		}
		return nil, 0, false, err
	}
	f, err := s.root.OpenFile(rootName(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, false, mapErr(op, name, err)
	}
	fi, err = f.Stat()
	if err == nil {
		err = checkRegular(op, name, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, 0, false, err
	}
	return f, fi.Size(), false, nil
}

func checkRegular(op, name string, fi fs.FileInfo, limit int64) error {
	return regularOrNot(op, name, fi.IsDir(), fi.Mode().IsRegular() && nlink(fi) <= 1, fi.Size(), limit)
}

// regularOrNot refuses what is not a regular, singly linked file of at
// most limit bytes: a directory with ErrIsDir, anything else irregular
// with ErrIrregular, a file over limit with ErrTooLarge.
func regularOrNot(op, name string, dir, regular bool, size, limit int64) error {
	switch {
	case dir:
		return classErr(op, name, memtool.ErrIsDir)
	case !regular:
		return classErr(op, name, memtool.ErrIrregular)
	case size > limit:
		return classErr(op, name, memtool.ErrTooLarge)
	}
	return nil
}

func (s *Store) readFile(op, name string, limit int64) ([]byte, error) {
	data, _, err := s.readFileHow(op, name, limit)
	return data, err
}

// readFileHow is readFile, and says whether the file was read directly:
// its own entry in the directory that holds name, not through a link there
// (which may lead into any other directory of the store).
func (s *Store) readFileHow(op, name string, limit int64) (data []byte, direct bool, err error) {
	f, size, direct, err := s.openRegular(op, name, limit)
	if err != nil {
		return nil, direct, err
	}
	defer f.Close()
	data = make([]byte, 0, size+1)
	// One byte past the limit shows a file grown since it was examined;
	// the largest limit (no limit) has no byte past it.
	data, err = readAll(io.LimitReader(f, min(limit, math.MaxInt64-1)+1), data)
	if err != nil {
		return nil, direct, mapErr(op, name, err)
	}
	if int64(len(data)) > limit {
		return nil, direct, classErr(op, name, memtool.ErrTooLarge)
	}
	return data, direct, nil
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

// openDir opens the directory name for listing: missing, ErrNotExist; a
// file, ErrNotDir.
func (s *Store) openDir(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkTenancy("readdir", name); err != nil {
		return nil, err
	}
	d, err := s.openForListing(name)
	if err != nil {
		return nil, s.dirErr("readdir", name, name, err)
	}
	if fi, err := d.Stat(); err != nil {
		d.Close()
		return nil, mapErr("readdir", name, err)
	} else if !fi.IsDir() {
		d.Close()
		return nil, classErr("readdir", name, memtool.ErrNotDir)
	}
	return d, nil
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	d, err := s.openDir(ctx, name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var entries []memtool.FileInfo
	err = s.stable(ctx, func() (bool, error) {
		names, changed, err := s.dirNames(ctx, d)
		if err != nil {
			return false, err
		}
		var vanished bool
		entries, vanished = s.examine(d, name, names)
		return !changed && !vanished, nil
	})
	if err != nil {
		return nil, mapErr("readdir", name, err)
	}
	return entries, nil
}

// stable runs try, a read of a directory, until try reports that what it
// read is of one moment: a few times, then once more holding the write
// lock, which every change of the store holds, so that a directory
// changed all the time is listed all the same.
func (s *Store) stable(ctx context.Context, try func() (ok bool, err error)) error {
	for range 8 {
		if ok, err := try(); ok || err != nil {
			return err
		}
	}
	// A reader makes no lock file: the directory's flock is the lock
	// that holds, and a read writes nothing.
	deadline := time.Now().Add(max(s.busy, 0))
	h, err := s.lockFile(ctx, s.busy, false)
	if err != nil {
		return err
	}
	defer h.unlock()
	_, err = try()
	if err != nil || h.file != nil {
		return err
	}
	// An older memtool locks only the lock file, which it makes: one that
	// appeared during the read may be such a writer's, which changed the
	// directory meanwhile. Read again holding its flock too. One still
	// missing was never held, as an older writer leaves it there.
	f, ferr := s.openLockFile(false)
	if ferr != nil {
		return nil
	}
	if err := flockWait(ctx, f, deadline); err != nil {
		f.Close()
		return err
	}
	h.file = f
	_, err = try()
	return err
}

// examine gives the entries names of the directory name, open as d, as
// ReadDir returns them: each looked at without following a link (a link
// through the root), the store's own and the vanished left out. vanished
// reports those: the names are no longer of one moment.
func (s *Store) examine(d *os.File, name string, names []string) (out []memtool.FileInfo, vanished bool) {
	out = make([]memtool.FileInfo, 0, len(names))
	withFd(d, func(dfd int) error {
		for _, n := range names {
			if strings.HasPrefix(n, ownPrefix) {
				continue
			}
			var st unix.Stat_t
			err := statAt(dfd, n, &st)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				vanished = true
				continue
			case err != nil:
				// Seen but not examinable (EACCES in a directory we may
				// read but not search, EIO): there, but not usable.
				out = append(out, memtool.FileInfo{Name: n, Type: fs.ModeIrregular})
				continue
			}
			if st.Mode&unix.S_IFMT != unix.S_IFLNK {
				out = append(out, infoAt(dfd, n, n, &st))
				continue
			}
			// Follow links only through the root, so that one leading out
			// reveals nothing (not even its target's size).
			p := path.Join(rootName(name), n)
			fi, err := s.root.Stat(p)
			if err != nil {
				continue
			}
			e := info(n, fi)
			if e.IsDir() && !s.listable(p) {
				e.Type = fs.ModeIrregular
			}
			out = append(out, e)
		}
		return nil
	})
	return out, vanished
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

var _ memtool.FileOpener = (*Store)(nil)

// OpenFile opens the file name for reading as ReadFile reads it: a
// regular, singly linked file of at most limit bytes when opened; a read
// past limit bytes fails with memtool.ErrTooLarge.
func (s *Store) OpenFile(ctx context.Context, name string, limit int64) (io.ReadCloser, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if err := s.checkTenancy("read", name); err != nil {
		return nil, 0, err
	}
	f, size, _, err := s.openRegular("read", name, limit)
	if err != nil {
		return nil, 0, err
	}
	return &limitedFile{f: f, name: name, left: limit}, size, nil
}

// limitedFile reads a file of at most left more bytes.
type limitedFile struct {
	f    io.ReadCloser
	name string
	left int64
}

// Read reads at most one byte past left, which shows a file grown past
// the limit; the largest limit (no limit) has no byte past it, and a read
// of any length fits under it.
func (r *limitedFile) Read(p []byte) (int, error) {
	if r.left < math.MaxInt64 && int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	switch {
	case r.left < 0:
		return n, classErr("read", r.name, memtool.ErrTooLarge)
	case err != nil && err != io.EOF:
		return n, mapErr("read", r.name, err)
	}
	return n, err
}

func (r *limitedFile) Close() error { return r.f.Close() }
