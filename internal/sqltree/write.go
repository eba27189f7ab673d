package sqltree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/memtool/memtool"
)

// change runs fn, op's change of name, bounded by ctx, in one transaction under the
// tenant's write lock, once the store has claimed its mode; refuse, if not
// nil, is the error of a name the change cannot take, returned instead.

func (t *Tree) change(ctx context.Context, op, name string, refuse error, fn func(ctx context.Context, q Querier) error) error {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.ready(ctx); err != nil {
		return err
	}
	if refuse != nil {
		return pathErr(op, name, refuse)
	}
	err := t.db.Write(ctx, t.tenant, func(q Querier) error { return fn(ctx, q) })
	if err == errUnchanged {
		return nil
	}
	var fe fnError
	if errors.As(err, &fe) {
		return fe.err
	}
	return t.err(ctx, op, name, err)
}

// Settler is a DB whose commits may be seen before they are durable
// (sqlitestore's, which fsyncs after the commit): a change that finds,
// outside a write, what makes it fail must not answer before that is
// durable.
type Settler interface {
	// Settle returns err, the answer a change gave from a read outside
	// a write, once the commits that read may have seen are durable, or
	// the error that says why they may not be.
	Settle(ctx context.Context, err error) error
}

// settle returns err, the answer of a change from a read outside a
// write, as the DB's Settle does if it is a Settler.
func (t *Tree) settle(ctx context.Context, err error) error {
	s, ok := t.db.(Settler)
	if !ok {
		return err
	}
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	return s.Settle(ctx, err)
}

// errUnchanged ends, without a write, an Update whose fn returned the old
// content: its transaction rolls back, and Update succeeds.
var errUnchanged = errors.New("unchanged")

// fnError is the failure of Update's fn, which Update returns as it is.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// find returns the entry at name, or the error for op on name if there
// is none.
func (t *Tree) find(ctx context.Context, q Querier, op, name string) (row, error) {
	r, ok, err := t.lookup(ctx, q, name)
	if err == nil && !ok {
		err = pathErr(op, name, memtool.ErrNotExist)
	}
	return r, err
}

// newErr returns the error for op creating name, given the entries of
// name's parent and of name, unless the parent is a directory and nothing
// is at name.
func newErr(op, name string, rows []row, ok []bool) error {
	if err := parentErr(op, name, rows[0], ok[0]); err != nil {
		return err
	}
	if ok[1] {
		return pathErr(op, name, memtool.ErrExist)
	}
	return nil
}

// refuseIf returns err if cond holds.
func refuseIf(cond bool, err error) error {
	if cond {
		return err
	}
	return nil
}

func (t *Tree) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	return t.change(ctx, "write", name, refuseIf(name == "", memtool.ErrIsDir), func(ctx context.Context, q Querier) error {
		dir, base := split(name)
		rows, ok, err := t.probe(ctx, q, dir, name)
		if err != nil {
			return err
		}
		if err := parentErr("write", name, rows[0], ok[0]); err != nil {
			return err
		}
		switch {
		case ok[1] && mode == memtool.CreateOnly:
			return pathErr("write", name, memtool.ErrExist)
		case ok[1] && rows[1].dir:
			return pathErr("write", name, memtool.ErrIsDir)
		}
		return q.Exec(ctx, t.q.upsert, t.tenant, dir, base, len(data), nonNil(data))
	})
}

func (t *Tree) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	return t.change(ctx, "update", name, nil, func(ctx context.Context, q Querier) error {
		old, err := t.readFile(ctx, q, t.q.readLocked, "update", name, limit)
		if err != nil {
			return err
		}
		updated, err := fn(old)
		if err != nil {
			return fnError{err}
		}
		if bytes.Equal(updated, old) {
			return errUnchanged
		}
		dir, base := split(name)
		return q.Exec(ctx, t.q.update, len(updated), nonNil(updated), t.tenant, dir, base)
	})
}

// Mkdir looks for name first without the write lock: a directory that
// exists (the common case of creating a file, whose parents memtool.MkdirAll
// makes sure of) costs one statement and no transaction. What exists in a
// committed snapshot did exist when Mkdir was called or after, so the
// answer is one Mkdir could give; a Settler gives it once the commit it
// rests on is durable. The look and the change are bounded by one Op.
func (t *Tree) Mkdir(ctx context.Context, name string) error {
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if name != "" {
		switch ok, err := t.exists(ctx, name); {
		case err != nil:
			return err
		case ok:
			return t.settle(ctx, pathErr("mkdir", name, memtool.ErrExist))
		}
	}
	return t.change(ctx, "mkdir", name, refuseIf(name == "", memtool.ErrExist), func(ctx context.Context, q Querier) error {
		dir, base := split(name)
		rows, ok, err := t.probe(ctx, q, dir, name)
		if err != nil {
			return err
		}
		if err := newErr("mkdir", name, rows, ok); err != nil {
			return err
		}
		return q.Exec(ctx, t.q.mkdir, t.tenant, dir, base)
	})
}

func (t *Tree) Remove(ctx context.Context, name string) error {
	return t.remove(ctx, "remove", name, false)
}

// RemoveAll removes the file or directory at name and everything in it, in
// one transaction.
func (t *Tree) RemoveAll(ctx context.Context, name string) error {
	return t.remove(ctx, "removeall", name, true)
}

func (t *Tree) remove(ctx context.Context, op, name string, all bool) error {
	return t.change(ctx, op, name, refuseIf(name == "", fs.ErrInvalid), func(ctx context.Context, q Querier) error {
		r, err := t.find(ctx, q, op, name)
		if err != nil {
			return err
		}
		if r.dir && all {
			for i, b := range t.q.below {
				if err := q.Exec(ctx, t.q.deleteBelow[i], b.Args(t.tenant, name)...); err != nil {
					return err
				}
			}
		} else if r.dir {
			var one int
			err := q.QueryRow(ctx, t.q.child, t.tenant, name).Scan(&one)
			if err == nil {
				return pathErr(op, name, memtool.ErrNotEmpty)
			}
			if !t.q.noRows(err) {
				return err
			}
		}
		dir, base := split(name)
		return q.Exec(ctx, t.q.delete, t.tenant, dir, base)
	})
}

// Rename moves the file or directory at oldname, with everything in it, to
// newname in one transaction.
func (t *Tree) Rename(ctx context.Context, oldname, newname string) error {
	var refuse error
	if oldname == "" || newname == "" || strings.HasPrefix(newname, oldname+"/") {
		refuse = fmt.Errorf("cannot move %q to %q: %w", oldname, newname, fs.ErrInvalid)
	}
	return t.change(ctx, "rename", oldname, refuse, func(ctx context.Context, q Querier) error {
		odir, obase := split(oldname)
		ndir, nbase := split(newname)
		rows, ok, err := t.probe(ctx, q, oldname, ndir, newname)
		switch {
		case err != nil:
			return err
		case !ok[0]:
			return pathErr("rename", oldname, memtool.ErrNotExist)
		}
		if err := newErr("rename", newname, rows[1:], ok[1:]); err != nil {
			return err
		}
		r := rows[0]
		if err := q.Exec(ctx, t.q.move, ndir, nbase, t.tenant, odir, obase); err != nil {
			return err
		}
		if !r.dir {
			return nil
		}
		// newname is not inside oldname, so what the first statement
		// moved is out of these ranges.
		for i, b := range t.q.below {
			args := append([]any{newname, oldname}, b.Args(t.tenant, oldname)...)
			if err := q.Exec(ctx, t.q.moveBelow[i], args...); err != nil {
				return err
			}
		}
		return nil
	})
}
