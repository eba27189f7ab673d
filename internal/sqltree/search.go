package sqltree

import (
	"context"

	"github.com/memtool/memtool"
)

// An index for search: what a Dialect gives to find the files that hold
// a search's terms (memtool.Searcher). The index is the database's own,
// kept current in the transaction of every write by the database itself
// (SQLite's triggers, PostgreSQL's expression index), so no write path
// of the tree can forget it.
type Index struct {
	// From returns the FROM clause of a search, and its arguments: the
	// entries as e, of which every file whose content holds every one of
	// terms (ASCII letters in either case if fold) is one; it may hold
	// other entries too, never one twice.
	From func(terms []string, fold bool) (from string, args []any)
}

// SearchFiles calls fn with the name and content of each file below dir
// of at most q.Limit bytes that the index says holds q.Terms, in one
// statement (one snapshot). Without an index (Dialect.Index nil, or no
// terms) it answers errors.ErrUnsupported: memtool.Search then scans.
func (t *Tree) SearchFiles(ctx context.Context, dir string, q memtool.IndexQuery, fn func(name string, data []byte) error) error {
	if t.q.index == nil || len(q.Terms) == 0 {
		return memtool.Unsupported("search", dir)
	}
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if err := t.readyToRead(ctx); err != nil {
		return err
	}
	from, args := t.q.index.From(q.Terms, q.FoldCase)
	query := `SELECT e.parent, e.name, e.data FROM ` + from + ` WHERE e.tenant = ? AND NOT e.dir AND e.size <= ?`
	args = append(args, t.tenant, q.Limit)
	if dir != "" {
		// Its files, and those deeper down (between dir+"/" and dir+"0":
		// '0' follows '/' in byte order).
		query += ` AND (e.parent = ? OR (e.parent >= ? AND e.parent < ?))`
		args = append(args, dir, dir+"/", dir+"0")
	}
	var fnErr error
	// A backend may run the statement again on a new connection: the
	// files it gave before are not given twice.
	seen := map[string]bool{}
	err := t.db.Query(ctx, func(qr Querier) error {
		rows, err := qr.Query(ctx, t.q.bind(query), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var parent, name string
			var data []byte
			if err := rows.Scan(&parent, &name, &data); err != nil {
				return err
			}
			if parent != "" {
				name = parent + "/" + name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			if fnErr = fn(name, data); fnErr != nil {
				return fnErr
			}
		}
		return rows.Err()
	})
	if fnErr != nil {
		return fnErr
	}
	return t.err(ctx, "search", dir, err)
}
