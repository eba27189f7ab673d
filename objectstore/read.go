package objectstore

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/memtool/memtool"
)

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := s.readyToRead(ctx); err != nil {
		return memtool.FileInfo{}, err
	}
	k, size, err := s.existing(ctx, "stat", name)
	switch {
	case err != nil:
		return memtool.FileInfo{}, blobErr(ctx, "stat", name, err)
	case k == directory:
		return memtool.FileInfo{Name: baseOf(name), Type: fs.ModeDir}, nil
	}
	return memtool.FileInfo{Name: baseOf(name), Size: size}, nil
}

// missingFile returns the error for reading a file object that is not
// there: the name is a directory, or nothing.
func (s *Store) missingFile(ctx context.Context, op, name string) error {
	k, _, err := s.kindOf(ctx, name)
	switch {
	case err != nil:
		return blobErr(ctx, op, name, err)
	case k == directory:
		return pathErr(op, name, memtool.ErrIsDir)
	}
	return pathErr(op, name, memtool.ErrNotExist)
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := s.readyToRead(ctx); err != nil {
		return nil, err
	}
	return s.readFile(ctx, "read", name, limit)
}

func (s *Store) readFile(ctx context.Context, op, name string, limit int64) ([]byte, error) {
	if name == "" {
		return nil, pathErr(op, name, memtool.ErrIsDir)
	}
	data, err := s.bk.b.read(ctx, s.fileKey(name), limit)
	switch {
	case notFound(err):
		return nil, s.missingFile(ctx, op, name)
	case errors.Is(err, errTooLarge):
		return nil, pathErr(op, name, memtool.ErrTooLarge)
	case err != nil:
		return nil, blobErr(ctx, op, name, err)
	}
	return data, nil
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := s.readyToRead(ctx); err != nil {
		return nil, err
	}
	k, _, err := s.existing(ctx, "readdir", name)
	switch {
	case err != nil:
		return nil, blobErr(ctx, "readdir", name, err)
	case k == regular:
		return nil, pathErr("readdir", name, memtool.ErrNotDir)
	}
	prefix := s.dirPrefix(name)
	out := []memtool.FileInfo{}
	err = s.bk.b.list(ctx, prefix, true, func(obj listed) bool {
		base := strings.TrimSuffix(strings.TrimPrefix(obj.key, prefix), "/")
		switch {
		case base == "" || strings.HasPrefix(base, ".memtool"):
			// The directory's own marker, or the store's own objects.
		case obj.dir:
			out = append(out, memtool.FileInfo{Name: base, Type: fs.ModeDir})
		default:
			out = append(out, memtool.FileInfo{Name: base, Size: obj.size})
		}
		return true
	})
	if err != nil {
		return nil, blobErr(ctx, "readdir", name, err)
	}
	return out, nil
}
