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

// probe looks up the entries at names in one statement; the root ("")
// is a directory, and takes no lookup. ok[i] is false if names[i] is
// missing.
func (t *Tree) probe(ctx context.Context, q Querier, names ...string) (rows []row, ok []bool, err error) {
	rows, ok = make([]row, len(names)), make([]bool, len(names))
	var args []any
	var at []int // the index in names of each term of the statement
	for i, name := range names {
		if name == "" {
			rows[i], ok[i] = row{dir: true}, true
			continue
		}
		dir, base := split(name)
		args = append(args, t.tenant, dir, base)
		at = append(at, i)
	}
	if len(at) == 0 {
		return rows, ok, nil
	}
	vals := make([]*int64, len(at))
	dest := make([]any, len(at))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := q.QueryRow(ctx, t.q.probe[len(at)-1], args...).Scan(dest...); err != nil {
		return nil, nil, err
	}
	for j, v := range vals {
		if v == nil {
			continue
		}
		i := at[j]
		ok[i] = true
		if *v < 0 {
			rows[i] = row{dir: true}
		} else {
			rows[i] = row{size: *v}
		}
	}
	return rows, ok, nil
}

// parentErr returns the error for op on name whose parent's entry is r
// (ok false if missing), or nil if the parent is a directory.
func parentErr(op, name string, r row, ok bool) error {
	switch {
	case !ok:
		return pathErr(op, name, memtool.ErrNotExist)
	case !r.dir:
		return pathErr(op, name, memtool.ErrNotDir)
	}
	return nil
}

func (t *Tree) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if name == "" {
		if err := t.readyToRead(ctx); err != nil {
			return memtool.FileInfo{}, err
		}
		return memtool.FileInfo{Type: fs.ModeDir}, nil
	}
	r, ok, err := t.stat(ctx, "stat", name)
	if err != nil {
		return memtool.FileInfo{}, err
	}
	if !ok {
		return memtool.FileInfo{}, pathErr("stat", name, memtool.ErrNotExist)
	}
	_, base := split(name)
	return info(base, r), nil
}

// exists reports whether anything is at the non-root name, in one
// statement.
func (t *Tree) exists(ctx context.Context, name string) (bool, error) {
	_, ok, err := t.stat(ctx, "mkdir", name)
	return ok, err
}

// stat looks up the non-root name for op in one statement, once the
// store's mode is checked.
func (t *Tree) stat(ctx context.Context, op, name string) (r row, ok bool, err error) {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.readyToRead(ctx); err != nil {
		return row{}, false, err
	}
	err = t.db.Query(ctx, func(q Querier) (err error) {
		r, ok, err = t.lookup(ctx, q, name)
		return err
	})
	return r, ok, t.err(ctx, op, name, err)
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
	if err := t.readyToRead(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err := t.db.Query(ctx, func(q Querier) (err error) {
		data, err = t.readFile(ctx, q, t.q.read, "read", name, limit)
		return err
	})
	return data, t.err(ctx, "read", name, err)
}

// ReadDir lists name, and checks that it is a directory, in one statement.
func (t *Tree) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.readyToRead(ctx); err != nil {
		return nil, err
	}
	var out []memtool.FileInfo
	err := t.db.Query(ctx, func(q Querier) error {
		out = nil
		var (
			rows Rows
			err  error
		)
		if name == "" {
			rows, err = q.Query(ctx, t.q.list, t.tenant, name)
		} else {
			dir, base := split(name)
			rows, err = q.Query(ctx, t.q.listSelf, t.tenant, name, t.tenant, dir, base)
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		self, found := row{dir: true}, name == ""
		for rows.Next() {
			var base string
			var r row
			var isSelf int
			dest := []any{&base, &r.dir, &r.size}
			if name != "" {
				dest = append(dest, &isSelf)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if isSelf == 1 {
				self, found = r, true
				continue
			}
			out = append(out, info(base, r))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return parentErr("readdir", name, self, found)
	})
	if err != nil {
		return nil, t.err(ctx, "readdir", name, err)
	}
	return out, nil
}
