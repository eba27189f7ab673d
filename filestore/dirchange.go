// This file holds the directory changes: Mkdir, Remove, RemoveAll and
// Rename, made and fsynced under the write lock (see write.go for settle
// and change).

package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
)

func (s *Store) Mkdir(ctx context.Context, name string) error {
	if name == "" {
		return classErr("mkdir", name, memtool.ErrExist)
	}
	return s.inParent(ctx, "mkdir", name, func(d *os.File, base string) (ticket, error) {
		return s.change(d, "mkdir", name, func(dfd int) error { return unix.Mkdirat(dfd, base, 0o700) })
	})
}

func (s *Store) Remove(ctx context.Context, name string) error {
	if name == "" {
		return classErr("remove", name, fs.ErrInvalid)
	}
	return s.inParent(ctx, "remove", name, func(d *os.File, base string) (ticket, error) {
		// The unlink then only drops the name; the blocks are freed after
		// the lock, before Remove returns.
		p := s.pinAt(d, base)
		p.now = true
		t, err := s.change(d, "remove", name, func(dfd int) error {
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
		t.pin = p
		return t, err
	})
}

// RemoveAll removes a file or a whole directory. A directory is first
// renamed to a hidden trash name in one atomic step, so that a crash leaves
// it either in place or gone (Open's recovery finishes the removal). One
// that the file system will not rename (EXDEV: a directory of an overlay's
// lower layer, a container's image, where redirect_dir is off) is removed
// where it is instead (see removeInPlace).
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	if name == "" {
		return classErr("removeall", name, fs.ErrInvalid)
	}
	return s.inParent(ctx, "removeall", name, func(d *os.File, base string) (ticket, error) {
		trash := randomName(trashPrefix)
		if t, err := s.change(d, "removeall", name, func(dfd int) error { return unix.Renameat(dfd, base, dfd, trash) }); err != nil {
			if errors.Is(err, unix.EXDEV) {
				return ticket{}, s.removeInPlace(d, name)
			}
			if errors.Is(err, memtool.ErrOutcomeUnknown) {
				// Moved to the trash, but not durably: the trash is left
				// as it is (emptied now, a crash could bring back a
				// part of the directory) for the next Open to sweep.
				s.leftDebris("removeall", name, err)
			}
			return t, err
		}
		// If this fails (the store closed meanwhile, say), the entry is gone
		// for every reader all the same; the next Open sweeps the rest.
		dir, _ := split(name)
		if err := s.root.RemoveAll(path.Join(rootName(dir), trash)); err != nil {
			s.leftDebris("removeall", name, err)
		}
		return ticket{}, nil
	})
}

// removeInPlace removes name, in the directory d, where it is, holding
// the write lock, and fsyncs d. Unlike the move to the trash it is not one
// step: a crash part way leaves the rest of it in place, and a failure
// part way is an error wrapping memtool.ErrOutcomeUnknown, since some of
// it may be gone.
func (s *Store) removeInPlace(d *os.File, name string) error {
	if err := s.root.RemoveAll(name); err != nil {
		return fmt.Errorf("%w: it may be removed in part: %w", memtool.ErrOutcomeUnknown, mapErr("removeall", name, err))
	}
	return s.syncMade(d, "removeall", name)
}

func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	if oldname == "" || newname == "" || strings.HasPrefix(newname, oldname+"/") {
		return classErr("rename", oldname, fs.ErrInvalid)
	}
	unlock, err := s.acquire(ctx, "rename", oldname, true)
	if err != nil {
		return err
	}
	od, obase, err := s.openParent("rename", oldname)
	if err != nil {
		return s.settle("rename", oldname, unlock, ticket{}, err)
	}
	defer od.Close()
	nd, nbase, err := s.openParent("rename", newname)
	if err != nil {
		return s.settle("rename", newname, unlock, ticket{}, err)
	}
	defer nd.Close()
	err = withFd(od, func(ofd int) error {
		return withFd(nd, func(nfd int) error { return renameNoReplace(ofd, obase, nfd, nbase) })
	})
	switch {
	case err == unix.EEXIST:
		// Maybe a write whose fsync is under way: answer once it is durable.
		return s.settle("rename", oldname, unlock, s.syncs.observed(nd, s.hooks), mapErr("rename", oldname, err))
	case err == unix.EXDEV:
		// The file system will not move it (a directory of an overlay's
		// lower layer, another file system mounted in between): as a store
		// that cannot rename, which makes callers copy it (see
		// memtool.Renamer).
		return s.settle("rename", oldname, unlock, ticket{}, fmt.Errorf("%w: %w", errors.ErrUnsupported, mapErr("rename", oldname, err)))
	case err != nil:
		return s.settle("rename", oldname, unlock, ticket{}, mapErr("rename", oldname, err))
	default:
		if err = s.syncMade(nd, "rename", newname); err == nil {
			err = s.syncMade(od, "rename", oldname)
		}
	}
	unlock()
	return err
}
