package pgstore

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree"
)

// Options configures a Store. nil, or a zero field, means the default.
type Options struct {
	// MaxConns is the most connections of the pool (default: the URL's
	// pool_max_conns, else DefaultMaxConns).
	MaxConns int32
	// ConnectTimeout bounds connecting to the server, one connection's
	// dial and start-up (default: the URL's connect_timeout, else
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// OpTimeout bounds every method, and Open, from taking a connection to
	// the commit; past it the method fails with an error that says the
	// server did not answer. The server holds each statement, and a
	// transaction left idle by a client that stopped answering, to it as
	// well (statement_timeout, idle_in_transaction_session_timeout; like
	// lock_timeout, at most the 2^31-1 ms the server takes), so a
	// frozen or vanished client releases its locks. Default:
	// DefaultOpTimeout.
	OpTimeout time.Duration
	// LockTimeout bounds every wait for a lock another session holds (the
	// tenant's write lock, a row, the migration lock, a table another
	// session locked): past it the method fails with an error wrapping
	// memtool.ErrBusy and has changed nothing (lock_timeout). Default:
	// DefaultLockTimeout.
	LockTimeout time.Duration
	// Existing opens only a schema that holds memtool's tables: Open
	// creates none, and fails on a schema without them with an error
	// wrapping ErrNoTables, having changed nothing. It is how a read
	// opens a store (memtool view): a read creates no store, and a role
	// that may only read gets that answer rather than a refused CREATE.
	// An older schema is still migrated, and one that holds only the keys
	// of package keys (memtool keys add, before the store's first use)
	// gets the store's tables, as by any Open.
	Existing bool
}

// ErrNoTables is Open's error, with Options.Existing, for a schema without
// memtool's tables. It matches fs.ErrNotExist: the store does not exist.
var ErrNoTables error = noTablesError{}

type noTablesError struct{}

func (noTablesError) Error() string {
	return "the database has no memtool tables on its search_path (nothing was created)"
}
func (noTablesError) Is(target error) bool { return target == fs.ErrNotExist }

// The defaults of Options.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultOpTimeout      = 30 * time.Second
	DefaultLockTimeout    = 5 * time.Second
	// DefaultMaxConns lets a server's requests to many tenants run at
	// once: pgxpool's own default (4 on a machine of up to 4 cores) made
	// 64 clients of 64 tenants queue for a connection. The pool opens
	// connections only as they are needed.
	DefaultMaxConns = 16
)

// dialect is PostgreSQL's spelling of the tree's statements.
var dialect = sqltree.Dialect{
	Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
	True:        "true",
	Upsert: `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, false, ?, ?)
			ON CONFLICT (tenant, parent, name) DO UPDATE SET size = excluded.size, data = excluded.data`,
	LockRow: ` FOR UPDATE`,
	Length:  "char_length",
	NoRows:  pgx.ErrNoRows,
	Index: &sqltree.Index{
		// The expression of the index memtool_entries_trgm, so that the
		// planner uses it.
		From: func(terms []string, fold bool) (string, []any) {
			op := " LIKE ?"
			if fold {
				op = " ILIKE ?"
			}
			conds := []string{"true"}
			var args []any
			for _, t := range foldTerms(terms, fold) {
				conds = append(conds, `encode(data, 'escape')`+op)
				args = append(args, "%"+likeEscape(escapeBytea(t))+"%")
			}
			return `(SELECT * FROM memtool_entries WHERE ` + strings.Join(conds, " AND ") + `) e`, args
		},
	},
}

// foldTerms returns terms as ILIKE can look them up when fold is set:
// each cut at its letters 'i' and 'I', keeping the pieces of three
// characters or more (what the trigram index can look up). ILIKE lowers
// both sides with the database's collation, and a Turkish one lowers 'I'
// to a dotless 'ı': "TITLE" ILIKE "%title%" is false there. Every file
// that holds a term holds its pieces.
func foldTerms(terms []string, fold bool) []string {
	if !fold {
		return terms
	}
	var pieces []string
	for _, t := range terms {
		for _, p := range strings.FieldsFunc(t, func(r rune) bool { return r == 'i' || r == 'I' }) {
			if utf8.RuneCountInString(p) >= 3 {
				pieces = append(pieces, p)
			}
		}
	}
	return pieces
}

// escapeBytea returns s as encode(data, 'escape') writes data holding
// it: a NUL and each byte with the high bit set as a backslash and
// three octal digits, a backslash doubled. Each byte is written alone, so a file
// holding s holds escapeBytea(s) in its escaped text.
func escapeBytea(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == 0 || c >= 0x80:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// likeEscape escapes the characters of a LIKE pattern (%, _ and the
// escape character, a backslash) in s.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// HasSearchIndex reports whether the database has the trigram index of
// search (see package doc): without it, search still runs on the server,
// reading every file of the memory.
func (s *Store) HasSearchIndex(ctx context.Context) (bool, error) {
	ctx, cancel := s.db.Op(ctx)
	defer cancel()
	var ok bool
	err := s.db.Query(ctx, func(q sqltree.Querier) error {
		return q.QueryRow(ctx, `SELECT to_regclass('memtool_entries_trgm') IS NOT NULL`).Scan(&ok)
	})
	return ok, s.db.Classify(ctx, err)
}

// Store is a memtool.Store in a PostgreSQL database. Besides Tenant and
// Close, its methods are those of the tree it embeds, which implements
// memtool.Store, memtool.Renamer, memtool.RemoveAller and
// memtool.TenantLister. The store Open returns has no tenant; Tenant
// returns one that has.
type Store struct {
	*sqltree.Tree
	db    *db
	owner bool // Close closes the pool
}

var _ memtool.Tenanted = (*Store)(nil)

// Open connects to the database at url (postgres:// or postgresql://, in
// the form pgx accepts; a search_path parameter picks the schema) and
// creates or migrates its tables (only migrates them, with
// Options.Existing). Its work is bounded by ctx and by
// Options.OpTimeout. Errors name the server and the user, never the
// password.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = o.MaxConns
	case !namesMaxConns(url):
		cfg.MaxConns = DefaultMaxConns
	}
	switch {
	case o.ConnectTimeout > 0:
		cfg.ConnConfig.ConnectTimeout = o.ConnectTimeout
	case cfg.ConnConfig.ConnectTimeout == 0:
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	// Sent in each connection's start-up: no round trip of their own. In
	// whole milliseconds, rounded up (the server reads 0 as no timeout),
	// and at most the largest the server takes (2^31-1 ms, almost 25
	// days; above it refuses the connection).
	for param, d := range map[string]time.Duration{
		"lock_timeout":                        o.LockTimeout,
		"statement_timeout":                   o.OpTimeout,
		"idle_in_transaction_session_timeout": o.OpTimeout,
	} {
		ms := min(d/time.Millisecond+min(d%time.Millisecond, 1), math.MaxInt32)
		cfg.ConnConfig.RuntimeParams[param] = strconv.FormatInt(int64(ms), 10)
	}
	// No ping before each use of a pooled connection (pgxpool pings one
	// idle for a second): it costs a round trip per method, and a method
	// that finds its connection dead runs again on a new one (db.run).
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	d := &db{pool: pool, opTimeout: o.OpTimeout, lockTimeout: o.LockTimeout}
	ctx, cancel := d.Op(ctx)
	defer cancel()
	if err := d.migrate(ctx, !o.Existing); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: open: %w", d.Classify(ctx, err))
	}
	return &Store{Tree: sqltree.New(d, dialect, "pgstore", "pgstore"), db: d, owner: true}, nil
}

// Close closes the pool. Closing a tenant's store does nothing; close the
// store Open returned.
func (s *Store) Close() error {
	if s.owner {
		s.db.pool.Close()
	}
	return nil
}

// Tenant returns the store of tenant id, which must pass
// memtool.ValidateTenant. The first call marks the database multi-tenant
// for good; on a database already used without a tenant it fails with
// memtool.ErrTenancy.
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	t, err := s.ForTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Store{Tree: t, db: s.db}, nil
}

// namesMaxConns reports whether the connection string conn sets
// pool_max_conns: a URL's query parameter, or a keyword of the
// keyword=value form (spaces around '=' included; not a word inside a
// password), as pgx reads it.
func namesMaxConns(conn string) bool {
	cfg, err := pgconn.ParseConfig(conn)
	if err != nil {
		return false
	}
	_, ok := cfg.RuntimeParams["pool_max_conns"]
	return ok
}
