// This file holds the writes and their durability: a temp file, fsync,
// rename, fsync of the directory, each under the write lock (see lock.go).

package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

// openParent opens the directory that holds name, through the root.
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

// inParent runs fn for the change op of name, holding the write lock
// (see acquire), with the directory that holds name open as d.
func (s *Store) inParent(ctx context.Context, op, name string, fn func(d *os.File, base string) error) error {
	unlock, err := s.acquire(ctx, op, name)
	if err != nil {
		return err
	}
	defer unlock()
	d, base, err := s.openParent(op, name)
	if err != nil {
		return err
	}
	defer d.Close()
	return fn(d, base)
}

// change makes the change fn in the directory d (given its descriptor),
// then fsyncs d, so that the change is on disk when it returns.
func change(d *os.File, op, name string, fn func(dfd int) error) error {
	if err := withFd(d, fn); err != nil {
		return mapErr(op, name, err)
	}
	return mapErr(op, name, d.Sync())
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if name == "" {
		return classErr("write", name, memtool.ErrIsDir)
	}
	return s.inParent(ctx, "write", name, func(d *os.File, base string) error {
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
	})
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
	return s.inParent(ctx, "mkdir", name, func(d *os.File, base string) error {
		return change(d, "mkdir", name, func(dfd int) error { return unix.Mkdirat(dfd, base, 0o700) })
	})
}

func (s *Store) Remove(ctx context.Context, name string) error {
	if name == "" {
		return classErr("remove", name, fs.ErrInvalid)
	}
	return s.inParent(ctx, "remove", name, func(d *os.File, base string) error {
		return change(d, "remove", name, func(dfd int) error {
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
	})
}

// RemoveAll removes a file or a whole directory. A directory is first
// renamed to a hidden trash name in one atomic step, so that a crash leaves
// it either in place or gone (Open's recovery finishes the removal).
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	if name == "" {
		return classErr("removeall", name, fs.ErrInvalid)
	}
	return s.inParent(ctx, "removeall", name, func(d *os.File, base string) error {
		trash := randomName(trashPrefix)
		if err := change(d, "removeall", name, func(dfd int) error { return unix.Renameat(dfd, base, dfd, trash) }); err != nil {
			return err
		}
		// If this fails, the entry is gone for every reader all the same;
		// the sweep retries the rest.
		dir, _ := split(name)
		s.root.RemoveAll(path.Join(rootName(dir), trash))
		return nil
	})
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
