package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/memtool/memtool"
)

// Rename moves the file or directory at oldname to newname. Object
// storage has no rename: the destination is written first (its file, or
// its directory marker, with a create-only write, so that of racing
// renames onto one name exactly one wins), then everything inside a
// directory is copied, and only then is the source deleted. It is not one
// atomic step: see the package documentation for what a reader, a crash
// or another process may see. On S3 the sources are deleted only on the
// ETags that were copied (renameFileS3, renameDirS3); on a service that
// ignores that condition Rename is refused with a memtool.Refusal.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	return s.change(ctx, "rename", oldname, oldname == "" || newname == "" || strings.HasPrefix(newname, oldname+"/"), fmt.Errorf("cannot move %q to %q: %w", oldname, newname, fs.ErrInvalid), func() error { return s.rename(ctx, oldname, newname) })
}

func (s *Store) rename(ctx context.Context, oldname, newname string) error {
	k, _, err := s.existing(ctx, "rename", oldname)
	if err != nil {
		return err
	}
	if err := s.checkFree(ctx, "rename", newname); err != nil {
		return err
	}
	if s.bk.s3 != nil {
		if err := s.bk.checkDeleteConditions(ctx); err != nil {
			return err
		}
		if k == regular {
			return s.renameFileS3(ctx, oldname, newname)
		}
		return s.renameDirS3(ctx, oldname, newname)
	}
	// Other services: correct within this process, which holds s.bk.mu.
	if k == regular {
		data, err := s.bk.b.read(ctx, s.fileKey(oldname), unlimited)
		if err != nil {
			return err
		}
		if err := s.put(ctx, "rename", newname, s.fileKey(newname), data, true); err != nil {
			return err
		}
		err = s.bk.b.remove(ctx, s.fileKey(oldname))
		if err == nil {
			return nil
		}
		return s.undoCopy(ctx, err, s.fileKey(oldname), []string{s.fileKey(newname)}, true)
	}
	keys, err := s.keysBelow(ctx, oldname, 0)
	if err != nil {
		return err
	}
	if err := s.put(ctx, "rename", newname, s.markerKey(newname), nil, true); err != nil {
		return err
	}
	from, to := s.dirPrefix(oldname), s.dirPrefix(newname)
	copied := []string{s.markerKey(newname)}
	for _, key := range keys {
		if key == s.markerKey(oldname) {
			continue
		}
		dst := to + strings.TrimPrefix(key, from)
		if err := duplicate(ctx, s.bk.b, dst, key); err != nil {
			if errors.Is(err, memtool.ErrOutcomeUnknown) {
				// This copy may still be made after Rename answers: the
				// new directory and its copies stay, so that it never
				// lands hidden, without its directory.
				return err
			}
			// Undo the copy (only what it wrote): the source is still
			// whole. An undo that fails leaves part of the copy.
			if derr := s.deleteTree(context.WithoutCancel(ctx), copied); derr != nil {
				return fmt.Errorf("%w (%v; the copies under the new name could not all be deleted: %v)", memtool.ErrOutcomeUnknown, err, derr)
			}
			return err
		}
		copied = append(copied, dst)
	}
	err = s.deleteTree(ctx, keys)
	if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		return err // done, or part of the source deleted
	}
	// The first delete failed: unless its answer was lost, the source is
	// whole, and the copy is taken back.
	first := slices.Clone(keys)
	sortForDelete(first)
	return s.undoCopy(ctx, err, first[0], copied, false)
}

// undoCopy answers a rename whose first delete of a source, of the object
// at source, failed with err, after it copied the objects copied: if the
// source is still there and the delete was refused, it deletes the copies
// and fails with err, having changed nothing. If the source is gone (the
// delete's answer was lost), a file rename (whole) is done; any other, or
// one it cannot settle, or one whose delete may still be made (err wraps
// memtool.ErrOutcomeUnknown: deleting the copies would lose the file if it
// is), fails with an error wrapping memtool.ErrOutcomeUnknown, keeping the
// copies.
func (s *Store) undoCopy(ctx context.Context, err error, source string, copied []string, whole bool) error {
	ctx = context.WithoutCancel(ctx)
	there, xerr := exists(ctx, s.bk.b, source)
	switch {
	case xerr == nil && !there && whole:
		return nil
	case errors.Is(err, memtool.ErrOutcomeUnknown):
		return err
	case xerr == nil && there:
		if derr := s.deleteTree(ctx, copied); derr == nil {
			return err
		}
	}
	return fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, err)
}
