// This file holds the short way of opening a file to read it: through its
// directory's descriptor, without walking the path twice.

package filestore

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

// openDirect opens name for reading as openRegular does, by the shortest
// way: the directory that holds it is opened once (through the root, or
// it is the store's own directory), the entry is examined there without
// following a link, then opened there with O_NOFOLLOW and examined again
// on its descriptor. It answers ok = false, having opened nothing, where
// openRegular's own way must decide: the entry or a directory on its path
// missing or not examinable, a link (the root follows links that stay
// inside it), a name of "." or "..". A directory answers ErrIsDir (one
// this process may not read and search, ErrIrregular: what Stat calls
// it), as openRegular's way does.
func (s *Store) openDirect(op, name string, limit int64) (f io.ReadCloser, size int64, err error, ok bool) {
	parent, base, done, ok := s.parentOf(name)
	if !ok || base == "" {
		return nil, 0, nil, false
	}
	defer done()
	var (
		st      unix.Stat_t
		fd      = -1
		verdict error // openRegular's answer, known here
	)
	err = withFd(parent, func(dfd int) error {
		if err := statAt(dfd, base, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return errIndirect
		}
		if verdict = checkRegularStat(op, name, &st, limit); verdict != nil {
			if errors.Is(verdict, memtool.ErrIsDir) && !listableAt(dfd, base) {
				verdict = classErr(op, name, memtool.ErrIrregular) // as Stat has it (infoAt)
			}
			return nil
		}
		var err error
		fd, err = openNoFollow(dfd, base)
		return err
	})
	switch {
	case verdict != nil:
		return nil, 0, verdict, true
	case err != nil:
		return nil, 0, nil, false
	}
	// What was opened may not be what was examined: examine it again.
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, nil, false
	}
	if err := checkRegularStat(op, name, &st, limit); err != nil {
		unix.Close(fd)
		return nil, 0, err, true
	}
	return &fdFile{fd: fd}, st.Size, nil, true
}

// statDirect answers Stat by the short way, as ReadDir examines an entry:
// in the descriptor of the directory that holds it (the store's own for
// the root and the names at its top), without following a link, a
// directory asked whether this process may read and search it there. It
// answers ok = false where Stat's own way must decide: the entry or a
// directory on its path missing or not examinable, a link, a "." name.
func (s *Store) statDirect(name string) (fi memtool.FileInfo, ok bool) {
	parent, base, done, ok := s.parentOf(name)
	if !ok {
		return memtool.FileInfo{}, false
	}
	defer done()
	entry := base
	if name == "" {
		entry = "." // the store's directory itself
	}
	err := withFd(parent, func(dfd int) error {
		var st unix.Stat_t
		if err := statAt(dfd, entry, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return errIndirect
		}
		fi = infoAt(dfd, entry, base, &st)
		return nil
	})
	return fi, err == nil
}

// parentOf opens the directory that holds name for the short ways: the
// store's own descriptor for the root and the names at its top, else the
// directory opened through the root (done closes it). It answers ok =
// false for a name ending in "." or "..", and where that directory cannot
// be opened.
func (s *Store) parentOf(name string) (parent *os.File, base string, done func(), ok bool) {
	dir, base := split(name)
	if base == "." || base == ".." {
		return nil, "", nil, false
	}
	if dir == "" {
		return s.self, base, func() {}, true
	}
	d, err := s.root.OpenFile(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", nil, false
	}
	return d, base, func() { d.Close() }, true
}

// infoAt is the FileInfo, named name, of the entry examined (not a link)
// as st in the directory dfd: a directory this process may not read and
// search there is irregular.
func infoAt(dfd int, entry, name string, st *unix.Stat_t) memtool.FileInfo {
	fi := infoFromStat(name, st)
	if fi.IsDir() && !listableAt(dfd, entry) {
		fi.Type = fs.ModeIrregular
	}
	return fi
}

// listableAt reports whether this process may read and search the
// directory entry of dfd (not following a link).
func listableAt(dfd int, entry string) bool {
	return unix.Faccessat(dfd, entry, unix.R_OK|unix.X_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) == nil
}

// errIndirect marks a link, which openDirect leaves to openRegular.
var errIndirect = errors.New("filestore: a link")

// checkRegularStat is checkRegular on a stat.
func checkRegularStat(op, name string, st *unix.Stat_t, limit int64) error {
	typ := st.Mode & unix.S_IFMT
	return regularOrNot(op, name, typ == unix.S_IFDIR, typ == unix.S_IFREG && st.Nlink <= 1, st.Size, limit)
}

func statAt(dfd int, name string, st *unix.Stat_t) error {
	for {
		if err := unix.Fstatat(dfd, name, st, unix.AT_SYMLINK_NOFOLLOW); err != unix.EINTR {
			return err
		}
	}
}

// openNoFollow opens a regular file for reading without following a link and
// without blocking on a FIFO put there meanwhile.
func openNoFollow(dfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
	}
}

// An fdFile reads a regular file by its descriptor alone: a regular file
// never makes a read wait for the poller, so no os.File is made for it
// (os.NewFile would ask the descriptor's flags and offer it to the
// poller, which refuses regular files: two system calls for nothing).
type fdFile struct{ fd int }

func (f *fdFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *fdFile) Close() error { return unix.Close(f.fd) }
