// Package sqltree is the tree of a memory in one SQL table, written once
// for sqlitestore and pgstore: the methods of memtool.Store, Renamer,
// RemoveAller, Tenanted's claim and tenant listing.
//
// # The table
//
// Every entry is a row of memtool_entries keyed by (tenant, parent, name):
// the tenant ("" in a single-tenant store), the full name of the parent
// directory ("" at the root) and the base name, compared byte by byte. A
// directory's entries are thus one range of the primary key, and so is
// everything below it. The mode of the store (see package tenancy) is the
// row 'tenancy' of memtool_meta.
//
// # What a backend gives
//
// A backend opens its database, creates or migrates its schema, and gives
// a DB (how it runs statements and transactions, what its errors mean)
// and a Dialect (how its SQL is spelt). Every method of a Tree runs in one
// transaction or one statement, so it is atomic; writes run under DB's
// write lock, so a read-modify-write never loses an update. Reads (Stat,
// ReadFile, ReadDir) are one statement each, outside a transaction: one
// round trip to a server. A write reads what it checks in one statement
// (the entry, its parent, a rename's source), and an Update whose fn
// returns the old content writes nothing.
//
// Every change of a tree passes through one function, Tree.change, but
// for Mkdir's answer that the name is taken, which it may find by a read
// outside a write: a DB whose commits are seen before they are durable
// (a Settler: sqlitestore's) gives that answer only once they are.
//
// # Search
//
// SearchFiles (memtool.Searcher) asks the database's index of the files'
// text (Dialect.Index) for the files that hold a search's terms, in one
// statement. The database keeps the index itself, in the transaction of
// every write (SQLite's triggers, PostgreSQL's expression index), so every
// statement of the tree, including the ranges a rename or RemoveAll
// changes, keeps it current, and a write that rolls back or never
// commits leaves it as it was.
package sqltree

import (
	"context"
	"fmt"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy"
)

// Querier runs statements: in a transaction, or on the database outside
// one. In DB.Write's transaction, Exec may hold a statement back and send
// it with the next statement or the commit: its error is then Write's.
type Querier interface {
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	Exec(ctx context.Context, query string, args ...any) error
}

// Row is the result of QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// DB is one open database as a backend runs it. Its methods return the
// driver's errors; Classify says what they mean.
type DB interface {
	// Op bounds one method of a store (a time limit of the backend's),
	// before it takes a connection.
	Op(ctx context.Context) (context.Context, context.CancelFunc)
	// Query runs fn's statements outside a transaction: each is atomic
	// on its own, and sees one snapshot.
	Query(ctx context.Context, fn func(q Querier) error) error
	// Write runs fn in a transaction that holds the write lock of
	// tenant's tree, and commits it unless fn fails. It fails with an
	// error wrapping memtool.ErrBusy if the lock stays held by another
	// writer too long, and with one wrapping memtool.ErrReadOnly if the
	// database takes no writes.
	Write(ctx context.Context, tenant string, fn func(q Querier) error) error
	// WriteMeta runs fn, which changes memtool_meta only, without taking
	// any tenant's write lock.
	WriteMeta(ctx context.Context, fn func(q Querier) error) error
	// Classify turns the failure of an operation bounded by ctx into the
	// error a caller acts on: cancellation stays recognisable, and the
	// driver's codes for a full disk, a lock held too long and a
	// read-only database wrap memtool.ErrNoSpace, ErrBusy and ErrReadOnly.
	Classify(ctx context.Context, err error) error
}

// Tree is the memory of one tenant (or of the tenant-less store) in a
// database. It implements memtool.Store, memtool.Renamer,
// memtool.RemoveAller and memtool.TenantLister; a backend's Tenant method
// calls ForTenant.
type Tree struct {
	db     DB
	q      *queries
	pkg    string // the backend's package name, for errors
	where  string // the database as errors name it
	tenant string
	gate   *tenancy.Gate
}

var (
	_ memtool.Store        = (*Tree)(nil)
	_ memtool.Renamer      = (*Tree)(nil)
	_ memtool.RemoveAller  = (*Tree)(nil)
	_ memtool.TenantLister = (*Tree)(nil)
)

// New returns the tenant-less tree of db. pkg names the backend and where
// the database in error messages ("sqlitestore", "sqlitestore /path/m.db").
// The tree claims the database single-tenant on its first use.
func New(db DB, d Dialect, pkg, where string) *Tree {
	return &Tree{db: db, q: d.queries(), pkg: pkg, where: where, gate: new(tenancy.Gate)}
}

// ForTenant returns the tree of tenant id, which must pass
// memtool.ValidateTenant, after claiming the database multi-tenant.
func (t *Tree) ForTenant(ctx context.Context, id string) (*Tree, error) {
	if t.tenant != "" {
		return nil, fmt.Errorf("%s: tenant %q: a tenant's store has no tenants", t.pkg, id)
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, err
	}
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	claimed, err := t.claim(ctx, tenancy.Multi)
	if err != nil {
		return nil, err
	}
	tt := *t
	tt.tenant = id
	tt.gate = tenancy.Claimed(claimed)
	return &tt, nil
}

// ready makes sure the tree's store has claimed its mode before its first
// change.
func (t *Tree) ready(ctx context.Context) error { return t.pass(ctx, tenancy.Claim) }

// readyToRead checks, before a read, that the store's recorded mode is
// the tree's, without recording one (tenancy.Peek): reading an unused
// store decides nothing.
func (t *Tree) readyToRead(ctx context.Context) error { return t.pass(ctx, tenancy.Peek) }

// pass runs check (tenancy.Claim or Peek) on the tree's mode once, through
// its gate, until it reports the mode claimed.
func (t *Tree) pass(ctx context.Context, check func(context.Context, tenancy.Record, string) (bool, error)) error {
	mode := tenancy.Single
	if t.tenant != "" {
		mode = tenancy.Multi
	}
	return t.gate.Pass(ctx, func(ctx context.Context) (bool, error) { return t.check(ctx, check, mode) })
}

func (t *Tree) claim(ctx context.Context, mode string) (bool, error) {
	return t.check(ctx, tenancy.Claim, mode)
}

// check runs check on the database's record of its mode, naming the store
// in an error.
func (t *Tree) check(ctx context.Context, check func(context.Context, tenancy.Record, string) (bool, error), mode string) (bool, error) {
	claimed, err := check(ctx, record{t}, mode)
	if err != nil {
		return false, fmt.Errorf("%s: %w", t.where, err)
	}
	return claimed, nil
}

// record is the tenancy.Record of the database: the row 'tenancy' of
// memtool_meta. Its errors are classified.
type record struct{ t *Tree }

func (r record) Mode(ctx context.Context) (string, error) {
	var mode string
	err := r.t.db.Query(ctx, func(q Querier) error {
		return q.QueryRow(ctx, r.t.q.mode).Scan(&mode)
	})
	if r.t.q.noRows(err) {
		return "", nil
	}
	if err != nil {
		return "", r.t.db.Classify(ctx, err)
	}
	return mode, nil
}

func (r record) Create(ctx context.Context, mode string) error {
	err := r.t.db.WriteMeta(ctx, func(q Querier) error {
		return q.Exec(ctx, r.t.q.claim, mode)
	})
	if err != nil {
		return r.t.db.Classify(ctx, err)
	}
	return nil
}

// Tenants lists, in byte order, the tenants that hold anything in a
// multi-tenant database (memtool migrate --all-tenants uses it). On a
// database used without tenants it fails with memtool.ErrTenancy; on an
// unused one it returns none.
func (t *Tree) Tenants(ctx context.Context) ([]string, error) {
	if t.tenant != "" {
		return nil, fmt.Errorf("%s: a tenant's store has no tenants", t.pkg)
	}
	ctx, cancel := t.db.Op(ctx)
	defer cancel()
	if ok, err := tenancy.Listed(ctx, record{t}); err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("%s: %w", t.where, err)
		}
		return nil, err
	}
	var ids []string
	err := t.db.Query(ctx, func(q Querier) error {
		ids = nil
		rows, err := q.Query(ctx, t.q.tenants)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.where, t.db.Classify(ctx, err))
	}
	return ids, nil
}
