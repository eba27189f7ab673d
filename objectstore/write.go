package objectstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/memtool/memtool"
)

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return s.change(ctx, "write", name, name == "", memtool.ErrIsDir, func() error { return s.writeFile(ctx, name, data, mode) })
}

func (s *Store) writeFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.checkParent(ctx, "write", name); err != nil {
		return err
	}
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return err
	case k != missing && mode == memtool.CreateOnly:
		return pathErr("write", name, memtool.ErrExist)
	case k == directory:
		return pathErr("write", name, memtool.ErrIsDir)
	}
	if s.bk.s3 != nil && (mode == memtool.CreateOnly || k == missing) {
		// A write that makes a new file (with Replace too) settles it
		// against a rename or removal of its directory, as a create does.
		err := s.createS3(ctx, "write", name, s.fileKey(name), data)
		if mode == memtool.Replace && errors.Is(err, memtool.ErrExist) {
			// Another process created the file since we looked (and
			// settled it): replace it.
			return s.put(ctx, "write", name, s.fileKey(name), data, false)
		}
		return err
	}
	return s.put(ctx, "write", name, s.fileKey(name), data, mode == memtool.CreateOnly)
}

// createS3 writes a new object at key for the entry name (a file, or a
// directory's marker) with If-None-Match, then settles it against a
// rename or removal of its directory by another process: if that took the
// directory away, the create is undone and fails with ErrNotExist.
func (s *Store) createS3(ctx context.Context, op, name, key string, data []byte) error {
	etag, err := s.bk.s3put(ctx, key, data, ifAbsent, nil)
	if isPrecondition(err) {
		// Another process created it since we looked.
		return pathErr(op, name, memtool.ErrExist)
	}
	if err != nil {
		return err
	}
	parent := parentOf(name)
	if parent == "" {
		return nil
	}
	where, err := s.settle(ctx, key, etag, s.markerKey(parent))
	switch {
	case err != nil:
		// The object is written, and may stay: the create may be made.
		return fmt.Errorf("%w (%v)", memtool.ErrOutcomeUnknown, err)
	case where == undone:
		return pathErr(op, name, memtool.ErrNotExist)
	}
	return nil
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if s.bk.s3 != nil {
		return s.updateS3(ctx, name, limit, fn)
	}
	old, err := s.readFile(ctx, "update", name, limit)
	if err != nil {
		return err
	}
	updated, err := fn(old)
	if err != nil {
		return err
	}
	if bytes.Equal(updated, old) {
		return nil // unchanged: nothing to write
	}
	return blobErr(ctx, "update", name, s.bk.b.write(ctx, s.fileKey(name), updated, false))
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	return s.change(ctx, "mkdir", name, name == "", memtool.ErrExist, func() error { return s.mkdir(ctx, name) })
}

func (s *Store) mkdir(ctx context.Context, name string) error {
	if err := s.checkFree(ctx, "mkdir", name); err != nil {
		return err
	}
	if s.bk.s3 != nil {
		return s.createS3(ctx, "mkdir", name, s.markerKey(name), markerBody())
	}
	return s.put(ctx, "mkdir", name, s.markerKey(name), nil, true)
}
