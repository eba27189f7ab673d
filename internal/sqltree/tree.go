package sqltree

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/memtool/memtool"
)

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// err wraps a database failure of op on name; the tree's own errors
// (already *fs.PathError) pass as they are.
func (t *Tree) err(ctx context.Context, op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return pathErr(op, name, t.db.Classify(ctx, err))
}

// split returns the parent directory and base of a non-root name.
func split(name string) (dir, base string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

type row struct {
	dir  bool
	size int64
}

func info(base string, r row) memtool.FileInfo {
	if r.dir {
		return memtool.FileInfo{Name: base, Type: fs.ModeDir}
	}
	return memtool.FileInfo{Name: base, Size: r.size}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// lookup returns the entry at a non-root name; ok is false if it is missing.
func (t *Tree) lookup(ctx context.Context, q Querier, name string) (row, bool, error) {
	dir, base := split(name)
	var r row
	err := q.QueryRow(ctx, t.q.lookup, t.tenant, dir, base).Scan(&r.dir, &r.size)
	if t.q.noRows(err) {
		return row{}, false, nil
	}
	return r, err == nil, err
}

// checkDir returns the error for op on name unless dir is a directory
// (the root always is).
func (t *Tree) checkDir(ctx context.Context, q Querier, op, name, dir string) error {
	if dir == "" {
		return nil
	}
	r, ok, err := t.lookup(ctx, q, dir)
	switch {
	case err != nil:
		return err
	case !ok:
		return pathErr(op, name, memtool.ErrNotExist)
	case !r.dir:
		return pathErr(op, name, memtool.ErrNotDir)
	}
	return nil
}

// checkParent returns the error for op on name unless name's parent is a
// directory.
func (t *Tree) checkParent(ctx context.Context, q Querier, op, name string) error {
	dir, _ := split(name)
	return t.checkDir(ctx, q, op, name, dir)
}

func (t *Tree) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.ready(ctx); err != nil {
		return memtool.FileInfo{}, err
	}
	if name == "" {
		return memtool.FileInfo{Type: fs.ModeDir}, nil
	}
	var r row
	var ok bool
	err := t.db.Query(ctx, func(q Querier) (err error) {
		r, ok, err = t.lookup(ctx, q, name)
		return err
	})
	if err != nil {
		return memtool.FileInfo{}, t.err(ctx, "stat", name, err)
	}
	if !ok {
		return memtool.FileInfo{}, pathErr("stat", name, memtool.ErrNotExist)
	}
	_, base := split(name)
	return info(base, r), nil
}

// readFile reads the file at name with query (q.read or q.readLocked).
func (t *Tree) readFile(ctx context.Context, q Querier, query, op, name string, limit int64) ([]byte, error) {
	if name == "" {
		return nil, pathErr(op, name, memtool.ErrIsDir)
	}
	dir, base := split(name)
	var (
		isDir bool
		size  int64
		data  []byte
	)
	err := q.QueryRow(ctx, query, limit, t.tenant, dir, base).Scan(&isDir, &size, &data)
	switch {
	case t.q.noRows(err):
		return nil, pathErr(op, name, memtool.ErrNotExist)
	case err != nil:
		return nil, t.err(ctx, op, name, err)
	case isDir:
		return nil, pathErr(op, name, memtool.ErrIsDir)
	case size > limit:
		return nil, pathErr(op, name, memtool.ErrTooLarge)
	}
	return nonNil(data), nil
}

func (t *Tree) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.ready(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err := t.db.Query(ctx, func(q Querier) (err error) {
		data, err = t.readFile(ctx, q, t.q.read, "read", name, limit)
		return err
	})
	return data, t.err(ctx, "read", name, err)
}

func (t *Tree) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.ready(ctx); err != nil {
		return nil, err
	}
	var out []memtool.FileInfo
	err := t.db.Read(ctx, func(q Querier) error {
		out = nil
		if name != "" {
			if err := t.checkDir(ctx, q, "readdir", name, name); err != nil {
				return err
			}
		}
		rows, err := q.Query(ctx, t.q.list, t.tenant, name)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var base string
			var r row
			if err := rows.Scan(&base, &r.dir, &r.size); err != nil {
				return err
			}
			out = append(out, info(base, r))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, t.err(ctx, "readdir", name, err)
	}
	return out, nil
}
