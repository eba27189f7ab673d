package sqltree

import (
	"errors"
	"strings"
)

// Dialect is how a database spells the tree's statements. They are
// written with ? for each parameter, in the order of the arguments.
type Dialect struct {
	// Placeholder returns the marker of the n-th parameter (from 1),
	// such as "$1"; nil keeps "?".
	Placeholder func(n int) string
	// True is the literal of true in the dir column.
	True string
	// Upsert writes a file: it inserts the row of its arguments (tenant,
	// parent, name, size, data; dir is false), or replaces the row at its
	// key.
	Upsert string
	// LockRow follows the query with which Update reads the file, to lock
	// its row ("" when the write lock covers it).
	LockRow string
	// Length is the function that counts the characters of a text.
	Length string
	// SplitBelow selects everything below a directory with two statements
	// (its children, and the entries deeper down) instead of one with
	// an OR, for a planner that searches the primary key for each range
	// but not for their OR.
	SplitBelow bool
	// NoRows is the error of a QueryRow that found no row.
	NoRows error
	// Index is the database's index of the files' text for search, or
	// nil if it has none.
	Index *Index
}

// Range is a condition that selects a range of the primary key below a
// directory, with the arguments it takes.
type Range struct {
	Cond string
	Args func(tenant, dir string) []any
}

// below returns the ranges that together select the entries of a tenant
// below a directory: those whose parent is the directory (children) and
// those whose parent is inside it (deeper, between dir+"/" and dir+"0":
// '0' follows '/' in byte order).
func (d Dialect) below() []Range {
	if d.SplitBelow {
		return []Range{
			{`tenant = ? AND parent = ?`, func(tenant, dir string) []any { return []any{tenant, dir} }},
			{`tenant = ? AND parent >= ? AND parent < ?`, func(tenant, dir string) []any { return []any{tenant, dir + "/", dir + "0"} }},
		}
	}
	return []Range{
		{`tenant = ? AND (parent = ? OR (parent >= ? AND parent < ?))`, func(tenant, dir string) []any { return []any{tenant, dir, dir + "/", dir + "0"} }},
	}
}

// Bind turns the ? of query into d's markers, for a backend's tests of
// its statements.
func (d Dialect) Bind(query string) string { return d.bind(query) }

// bind turns the ? of query into d's markers.
func (d Dialect) bind(query string) string {
	if d.Placeholder == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString(d.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// queries are the statements of one dialect, bound.
type queries struct {
	lookup, list, listSelf, read, readLocked, upsert, update, mkdir, child, delete, move string
	deleteBelow, moveBelow                                                               []string
	below                                                                                []Range
	// probe[n-1] looks up n entries in one statement (see Tree.probe).
	probe                []string
	mode, claim, tenants string
	noRows               func(error) bool
	index                *Index
	bind                 func(query string) string
}

// The statements whose plans a backend tests: each must be a range of the
// primary key.
const (
	lookupQuery = `SELECT dir, size FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`
	listQuery   = `SELECT name, dir, size FROM memtool_entries WHERE tenant = ? AND parent = ?`
)

// listSelfQuery lists a directory and looks it up in one statement (one
// snapshot): its entries have self 0, and the row of the directory itself,
// if any, self 1.
const listSelfQuery = `SELECT name, dir, size, 0 FROM memtool_entries WHERE tenant = ? AND parent = ?
UNION ALL SELECT name, dir, size, 1 FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`

// probeTerm is the column of one entry in a probe: NULL if it is missing,
// -1 for a directory, else the file's size.
const probeTerm = `(SELECT CASE WHEN dir THEN -1 ELSE size END FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?)`

// maxProbe is the most entries one probe looks up.
const maxProbe = 3

// tenantsQuery lists the distinct tenants by skipping through the primary
// key (one index seek per tenant), so its cost is the number of tenants, not
// the number of entries.
const tenantsQuery = `
WITH RECURSIVE t(tenant) AS (
	SELECT (SELECT tenant FROM memtool_entries WHERE tenant > '' ORDER BY tenant LIMIT 1)
	UNION ALL
	SELECT (SELECT e.tenant FROM memtool_entries e WHERE e.tenant > t.tenant ORDER BY e.tenant LIMIT 1) FROM t WHERE t.tenant IS NOT NULL
)
SELECT tenant FROM t WHERE tenant IS NOT NULL`

func (d Dialect) queries() *queries {
	read := `SELECT dir, size, CASE WHEN size <= ? THEN data END FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`
	q := &queries{
		lookup:     d.bind(lookupQuery),
		list:       d.bind(listQuery),
		listSelf:   d.bind(listSelfQuery),
		read:       d.bind(read),
		readLocked: d.bind(read + d.LockRow),
		upsert:     d.bind(d.Upsert),
		update:     d.bind(`UPDATE memtool_entries SET size = ?, data = ? WHERE tenant = ? AND parent = ? AND name = ?`),
		mkdir:      d.bind(`INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, ` + d.True + `, 0, NULL)`),
		child:      d.bind(`SELECT 1 FROM memtool_entries WHERE tenant = ? AND parent = ? LIMIT 1`),
		delete:     d.bind(`DELETE FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`),
		move:       d.bind(`UPDATE memtool_entries SET parent = ?, name = ? WHERE tenant = ? AND parent = ? AND name = ?`),
		below:      d.below(),
		mode:       `SELECT value FROM memtool_meta WHERE key = 'tenancy'`,
		claim:      d.bind(`INSERT INTO memtool_meta (key, value) VALUES ('tenancy', ?) ON CONFLICT (key) DO NOTHING`),
		tenants:    tenantsQuery,
		noRows:     func(err error) bool { return errors.Is(err, d.NoRows) },
		index:      d.Index,
		bind:       d.bind,
	}
	for n := 1; n <= maxProbe; n++ {
		q.probe = append(q.probe, d.bind(`SELECT `+strings.Repeat(probeTerm+`, `, n-1)+probeTerm))
	}
	for _, r := range q.below {
		q.deleteBelow = append(q.deleteBelow, d.bind(`DELETE FROM memtool_entries WHERE `+r.Cond))
		// Names are valid UTF-8 (in a UTF-8 database), so substr and
		// Length count the same characters.
		q.moveBelow = append(q.moveBelow, d.bind(`UPDATE memtool_entries SET parent = ? || substr(parent, `+d.Length+`(?) + 1) WHERE `+r.Cond))
	}
	return q
}

// Search is a query a backend's tests explain, to check that it is a
// range of the primary key.
type Search struct {
	Name, SQL string
	Args      []any
}

// Searches returns the lookup of name in parent, the listing of parent,
// and the ranges below parent ("below 1", ...), of tenant.
func (d Dialect) Searches(tenant, parent, name string) []Search {
	s := []Search{
		{"lookup", d.bind(lookupQuery), []any{tenant, parent, name}},
		{"list", d.bind(listQuery), []any{tenant, parent}},
	}
	for i, r := range d.below() {
		s = append(s, Search{"below " + string(rune('1'+i)), d.bind(`SELECT name FROM memtool_entries WHERE ` + r.Cond), r.Args(tenant, parent)})
	}
	return s
}
