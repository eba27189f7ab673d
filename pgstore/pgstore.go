package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/memtool/memtool"
)

// migrations are the schema's versions, in order; migration i brings the
// schema to version i+1. Never edit one that has shipped: append.
var migrations = []string{
	// 1: entries keyed by (tenant, parent, name) in byte order, so that a
	// directory's entries and a subtree are each one range of the key.
	`CREATE TABLE memtool_meta (
		key   text PRIMARY KEY,
		value text NOT NULL
	);
	CREATE TABLE memtool_entries (
		tenant text COLLATE "C" NOT NULL,
		parent text COLLATE "C" NOT NULL,
		name   text COLLATE "C" NOT NULL,
		dir    boolean NOT NULL,
		size   bigint NOT NULL,
		data   bytea,
		PRIMARY KEY (tenant, parent, name)
	);`,
}

// migrationLock is the advisory lock key under which migrations run.
const migrationLock = 0x6d656d746f6f6c // "memtool"

// Options configures a Store. nil, or a zero field, means the default.
type Options struct {
	// MaxConns is the most connections of the pool (default: pgxpool's).
	MaxConns int32
	// ConnectTimeout bounds connecting to the server, one connection's
	// dial and start-up (default: the URL's connect_timeout, else
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// OpTimeout bounds every method, and Open, from taking a connection to
	// the commit; past it the method fails with an error that says the
	// server did not answer. The server holds each statement, and a
	// transaction left idle by a client that stopped answering, to it as
	// well (statement_timeout, idle_in_transaction_session_timeout), so a
	// frozen or vanished client releases its locks. Default:
	// DefaultOpTimeout.
	OpTimeout time.Duration
	// LockTimeout bounds every wait for a lock another session holds (the
	// tenant's write lock, a row, the migration lock, a table another
	// session locked): past it the method fails with an error wrapping
	// memtool.ErrBusy and has changed nothing (lock_timeout). Default:
	// DefaultLockTimeout.
	LockTimeout time.Duration
}

// The defaults of Options.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultOpTimeout      = 30 * time.Second
	DefaultLockTimeout    = 5 * time.Second
)

// Store is a memtool.Store in a PostgreSQL database. It implements
// memtool.Renamer, memtool.RemoveAller and memtool.Tenanted. The store
// returned by Open is the tenant-less one; Tenant returns the others.
type Store struct {
	pool      *pgxpool.Pool
	opTimeout time.Duration
	tenant    string
	owner     bool

	claimMu sync.Mutex
	claimed bool
}

var (
	_ memtool.Store       = (*Store)(nil)
	_ memtool.Renamer     = (*Store)(nil)
	_ memtool.RemoveAller = (*Store)(nil)
	_ memtool.Tenanted    = (*Store)(nil)
)

// Open connects to the database at url (postgres:// or postgresql://, in
// the form pgx accepts; a search_path parameter picks the schema) and
// creates or migrates its tables. Its work is bounded by ctx and by
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
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
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
	// Sent in each connection's start-up: no round trip of their own.
	for param, d := range map[string]time.Duration{
		"lock_timeout":                        o.LockTimeout,
		"statement_timeout":                   o.OpTimeout,
		"idle_in_transaction_session_timeout": o.OpTimeout,
	} {
		cfg.ConnConfig.RuntimeParams[param] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s := &Store{pool: pool, opTimeout: o.OpTimeout, owner: true}
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: open: %w", s.classify(ctx, err))
	}
	return s, nil
}

// migrate brings the schema to the latest version. A schema already there
// costs one read; otherwise the migrations run in one transaction under an
// advisory lock, so that memtool processes starting at once migrate once.
func (s *Store) migrate(ctx context.Context) error {
	return s.run(ctx, func(conn *pgx.Conn) error {
		version, err := schemaVersion(ctx, conn)
		var pgErr *pgconn.PgError
		switch {
		case err == nil && version == len(migrations):
			return nil
		case err != nil && !(errors.As(err, &pgErr) && pgErr.Code == codeUndefinedTable):
			return err
		}
		return s.commit(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS memtool_schema_version (version integer NOT NULL)`); err != nil {
				return err
			}
			version, err := schemaVersion(ctx, tx)
			if err != nil {
				return err
			}
			for v := version; v < len(migrations); v++ {
				if _, err := tx.Exec(ctx, migrations[v]); err != nil {
					return fmt.Errorf("migration %d: %w", v+1, err)
				}
				if _, err := tx.Exec(ctx, `INSERT INTO memtool_schema_version (version) VALUES ($1)`, v+1); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// schemaVersion reads the schema's version, and refuses one newer than
// this memtool knows.
func schemaVersion(ctx context.Context, q querier) (int, error) {
	var version int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM memtool_schema_version`).Scan(&version); err != nil {
		return 0, err
	}
	if version > len(migrations) {
		return 0, fmt.Errorf("the database's schema is version %d, newer than this memtool knows (%d)", version, len(migrations))
	}
	return version, nil
}

// Close closes the pool. Closing a tenant's store does nothing; close the
// store Open returned.
func (s *Store) Close() error {
	if s.owner {
		s.pool.Close()
	}
	return nil
}

// Tenant returns the store of tenant id, which must pass
// memtool.ValidateTenant. The first call marks the database multi-tenant
// for good; on a database already used without a tenant it fails with
// memtool.ErrTenancy.
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("pgstore: tenant %q: a tenant's store has no tenants", id)
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, err
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	claimed, err := s.claim(ctx, "multi")
	if err != nil {
		return nil, err
	}
	return &Store{pool: s.pool, opTimeout: s.opTimeout, tenant: id, claimed: claimed}, nil
}

// claim records the tenancy mode on first use and checks it afterwards.
// On a database that takes no writes and has no mode yet it claims
// nothing (claimed is false): nothing can be written in either mode.
func (s *Store) claim(ctx context.Context, mode string) (claimed bool, err error) {
	var got string
	err = s.run(ctx, func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, `SELECT value FROM memtool_meta WHERE key = 'tenancy'`).Scan(&got)
		// The insert finds no row only if another process inserted the
		// mode while it ran; the next try sees that row.
		for try := 0; try < 3 && errors.Is(err, pgx.ErrNoRows); try++ {
			err = conn.QueryRow(ctx, `WITH ins AS (
					INSERT INTO memtool_meta (key, value) VALUES ('tenancy', $1) ON CONFLICT (key) DO NOTHING RETURNING value
				)
				SELECT value FROM ins UNION ALL SELECT value FROM memtool_meta WHERE key = 'tenancy'`, mode).Scan(&got)
		}
		return err
	})
	if errors.Is(s.classify(ctx, err), memtool.ErrReadOnly) && got == "" {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pgstore: %w", s.classify(ctx, err))
	}
	if got != mode {
		return false, fmt.Errorf("pgstore: %w", memtool.TenancyError(got == "multi"))
	}
	return true, nil
}

func (s *Store) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.claimed {
		return nil
	}
	mode := "single"
	if s.tenant != "" {
		mode = "multi"
	}
	claimed, err := s.claim(ctx, mode)
	s.claimed = claimed
	return err
}

// errNoAnswer is the cause of an operation's context when OpTimeout ends it.
var errNoAnswer = errors.New("no answer from the server")

// op bounds one operation of the store by OpTimeout.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, s.opTimeout, errNoAnswer)
}

// run runs fn on a connection of the pool. A server that restarted, or
// ended the store's sessions, leaves the pool's connections dead: should fn
// find its connection dead before it sent a commit, nothing was done, so
// the pool drops its connections and fn runs once more, on a new one.
func (s *Store) run(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	for try := 0; ; try++ {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		err = fn(conn.Conn())
		lost := err != nil && conn.Conn().IsClosed()
		conn.Release()
		if !lost || try > 0 || ctx.Err() != nil || errors.Is(err, errCommitUnknown) {
			return err
		}
		s.pool.Reset()
	}
}

// errCommitUnknown marks a commit whose answer never came: the server may
// or may not have made the change, so it is not tried again.
var errCommitUnknown = errors.New("the connection was lost during the commit, so the change may or may not have been made")

// commit runs fn in a transaction on conn and commits it.
func (s *Store) commit(ctx context.Context, conn *pgx.Conn, fn func(tx pgx.Tx) error) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback(ctx)
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		if conn.IsClosed() {
			// Not wrapped: the model must not read "nothing changed".
			return fmt.Errorf("%w (%v)", errCommitUnknown, err)
		}
		return err
	}
	return nil
}

// write runs fn in a transaction that holds the tenant's write lock: the
// writes of one tenant are serialised, across every process and machine,
// so a read-modify-write never loses an update and of racing creates or
// renames exactly one wins. Readers take no lock.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.run(ctx, func(conn *pgx.Conn) error {
		return s.commit(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, tenantLockQuery, tenantLockKey(s.tenant)); err != nil {
				return err
			}
			return fn(tx)
		})
	})
}

// tenantLockQuery takes the write lock of the tenant tenantLockKey names,
// until the transaction ends.
const tenantLockQuery = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

func tenantLockKey(tenant string) string { return "memtool tenant " + tenant }

func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.run(ctx, func(conn *pgx.Conn) error {
		return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	})
}

// The PostgreSQL error codes (SQLSTATE) the store acts on.
const (
	codeUndefinedTable      = "42P01"
	codeUniqueViolation     = "23505"
	codeLockNotAvailable    = "55P03"
	codeDiskFull            = "53100"
	codeReadOnlyTransaction = "25006"
)

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (s *Store) dbErr(ctx context.Context, op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return pathErr(op, name, s.classify(ctx, err))
}

// classify turns the failure of an operation bounded by ctx into the
// error a caller acts on: a timeout of the operation's own, the caller's
// cancellation, or memtool's error for a PostgreSQL error code.
func (s *Store) classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	switch ctxErr := ctx.Err(); {
	case errors.Is(err, errCommitUnknown):
		return err
	case context.Cause(ctx) == errNoAnswer:
		// Not wrapped: the caller did not cancel anything.
		return fmt.Errorf("PostgreSQL did not answer within %v (%v)", s.opTimeout, err)
	case ctxErr != nil && !errors.Is(err, ctxErr):
		return fmt.Errorf("%w (%v)", ctxErr, err)
	case ctxErr == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		// pgx's own timeout, connecting: not the caller's cancellation.
		return fmt.Errorf("PostgreSQL did not answer (%v)", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case codeUniqueViolation:
		// The tenant's write lock makes a second row at one name
		// impossible; should the primary key refuse one anyway, that is
		// still "exists".
		return fmt.Errorf("%w (%v)", memtool.ErrExist, err)
	case codeLockNotAvailable:
		return fmt.Errorf("%w (%v)", memtool.ErrBusy, err)
	case codeDiskFull:
		return fmt.Errorf("%w (%v)", memtool.ErrNoSpace, err)
	case codeReadOnlyTransaction:
		return fmt.Errorf("%w (%v)", memtool.ErrReadOnly, err)
	}
	return err
}

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

// The queries whose plans TestPlans checks: each must be a range of the
// primary key.
const (
	lookupQuery = `SELECT dir, size FROM memtool_entries WHERE tenant = $1 AND parent = $2 AND name = $3`
	listQuery   = `SELECT name, dir, size FROM memtool_entries WHERE tenant = $1 AND parent = $2`
)

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) lookup(ctx context.Context, q querier, name string) (row, bool, error) {
	dir, base := split(name)
	var r row
	err := q.QueryRow(ctx, lookupQuery, s.tenant, dir, base).Scan(&r.dir, &r.size)
	if errors.Is(err, pgx.ErrNoRows) {
		return row{}, false, nil
	}
	return r, err == nil, err
}

func (s *Store) checkParent(ctx context.Context, q querier, op, name string) error {
	dir, _ := split(name)
	if dir == "" {
		return nil
	}
	r, ok, err := s.lookup(ctx, q, dir)
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

func info(base string, r row) memtool.FileInfo {
	if r.dir {
		return memtool.FileInfo{Name: base, Type: fs.ModeDir}
	}
	return memtool.FileInfo{Name: base, Size: r.size}
}

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return memtool.FileInfo{}, err
	}
	if name == "" {
		return memtool.FileInfo{Type: fs.ModeDir}, nil
	}
	var r row
	var ok bool
	err := s.run(ctx, func(conn *pgx.Conn) (err error) {
		r, ok, err = s.lookup(ctx, conn, name)
		return err
	})
	if err != nil {
		return memtool.FileInfo{}, s.dbErr(ctx, "stat", name, err)
	}
	if !ok {
		return memtool.FileInfo{}, pathErr("stat", name, memtool.ErrNotExist)
	}
	_, base := split(name)
	return info(base, r), nil
}

func (s *Store) readFile(ctx context.Context, q querier, op, name string, limit int64, lock bool) ([]byte, error) {
	if name == "" {
		return nil, pathErr(op, name, memtool.ErrIsDir)
	}
	dir, base := split(name)
	var (
		isDir bool
		size  int64
		data  []byte
	)
	query := `SELECT dir, size, CASE WHEN size <= $1 THEN data END FROM memtool_entries WHERE tenant = $2 AND parent = $3 AND name = $4`
	if lock {
		query += ` FOR UPDATE`
	}
	err := q.QueryRow(ctx, query, limit, s.tenant, dir, base).Scan(&isDir, &size, &data)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, pathErr(op, name, memtool.ErrNotExist)
	case err != nil:
		return nil, s.dbErr(ctx, op, name, err)
	case isDir:
		return nil, pathErr(op, name, memtool.ErrIsDir)
	case size > limit:
		return nil, pathErr(op, name, memtool.ErrTooLarge)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

func (s *Store) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var data []byte
	err := s.run(ctx, func(conn *pgx.Conn) (err error) {
		data, err = s.readFile(ctx, conn, "read", name, limit, false)
		return err
	})
	return data, s.dbErr(ctx, "read", name, err)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var out []memtool.FileInfo
	err := s.read(ctx, func(tx pgx.Tx) error {
		out = nil
		if name != "" {
			r, ok, err := s.lookup(ctx, tx, name)
			switch {
			case err != nil:
				return err
			case !ok:
				return pathErr("readdir", name, memtool.ErrNotExist)
			case !r.dir:
				return pathErr("readdir", name, memtool.ErrNotDir)
			}
		}
		rows, err := tx.Query(ctx, listQuery, s.tenant, name)
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
		return nil, s.dbErr(ctx, "readdir", name, err)
	}
	return out, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("write", name, memtool.ErrIsDir)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := s.checkParent(ctx, tx, "write", name); err != nil {
			return err
		}
		r, ok, err := s.lookup(ctx, tx, name)
		switch {
		case err != nil:
			return err
		case ok && mode == memtool.CreateOnly:
			return pathErr("write", name, memtool.ErrExist)
		case ok && r.dir:
			return pathErr("write", name, memtool.ErrIsDir)
		}
		dir, base := split(name)
		_, err = tx.Exec(ctx, `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES ($1, $2, $3, false, $4, $5)
			ON CONFLICT (tenant, parent, name) DO UPDATE SET size = excluded.size, data = excluded.data`,
			s.tenant, dir, base, len(data), nonNil(data))
		return err
	})
	return s.dbErr(ctx, "write", name, err)
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return err
	}
	var fnErr error
	err := s.write(ctx, func(tx pgx.Tx) error {
		old, err := s.readFile(ctx, tx, "update", name, limit, true)
		if err != nil {
			return err
		}
		updated, err := fn(old)
		if err != nil {
			fnErr = err
			return err
		}
		dir, base := split(name)
		_, err = tx.Exec(ctx, `UPDATE memtool_entries SET size = $1, data = $2 WHERE tenant = $3 AND parent = $4 AND name = $5`,
			len(updated), nonNil(updated), s.tenant, dir, base)
		return err
	})
	if fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	return s.dbErr(ctx, "update", name, err)
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("mkdir", name, memtool.ErrExist)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := s.checkParent(ctx, tx, "mkdir", name); err != nil {
			return err
		}
		if _, ok, err := s.lookup(ctx, tx, name); err != nil {
			return err
		} else if ok {
			return pathErr("mkdir", name, memtool.ErrExist)
		}
		dir, base := split(name)
		_, err := tx.Exec(ctx, `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES ($1, $2, $3, true, 0, NULL)`, s.tenant, dir, base)
		return err
	})
	return s.dbErr(ctx, "mkdir", name, err)
}

func (s *Store) Remove(ctx context.Context, name string) error {
	return s.remove(ctx, "remove", name, false)
}

// RemoveAll removes the file or directory at name and everything in it, in
// one transaction.
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	return s.remove(ctx, "removeall", name, true)
}

// subtree selects everything below the directory $2 of tenant $1 ($3 and
// $4 are $2+"/" and $2+"0": '0' follows '/' in byte order, the order of the
// "C" collation).
const subtree = `tenant = $1 AND (parent = $2 OR (parent >= $3 AND parent < $4))`

func (s *Store) subtreeArgs(name string) []any { return []any{s.tenant, name, name + "/", name + "0"} }

func (s *Store) remove(ctx context.Context, op, name string, all bool) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr(op, name, fs.ErrInvalid)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		r, ok, err := s.lookup(ctx, tx, name)
		switch {
		case err != nil:
			return err
		case !ok:
			return pathErr(op, name, memtool.ErrNotExist)
		}
		if r.dir {
			if all {
				if _, err := tx.Exec(ctx, `DELETE FROM memtool_entries WHERE `+subtree, s.subtreeArgs(name)...); err != nil {
					return err
				}
			} else {
				var one int
				err := tx.QueryRow(ctx, `SELECT 1 FROM memtool_entries WHERE tenant = $1 AND parent = $2 LIMIT 1`, s.tenant, name).Scan(&one)
				if err == nil {
					return pathErr(op, name, memtool.ErrNotEmpty)
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
		}
		dir, base := split(name)
		_, err = tx.Exec(ctx, `DELETE FROM memtool_entries WHERE tenant = $1 AND parent = $2 AND name = $3`, s.tenant, dir, base)
		return err
	})
	return s.dbErr(ctx, op, name, err)
}

// Rename moves the file or directory at oldname, with everything in it, to
// newname in one transaction.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if err := s.ready(ctx); err != nil {
		return err
	}
	if oldname == "" || newname == "" || strings.HasPrefix(newname+"/", oldname+"/") {
		return pathErr("rename", oldname, fmt.Errorf("cannot move %q to %q: %w", oldname, newname, fs.ErrInvalid))
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		r, ok, err := s.lookup(ctx, tx, oldname)
		switch {
		case err != nil:
			return err
		case !ok:
			return pathErr("rename", oldname, memtool.ErrNotExist)
		}
		if err := s.checkParent(ctx, tx, "rename", newname); err != nil {
			return err
		}
		if _, ok, err := s.lookup(ctx, tx, newname); err != nil {
			return err
		} else if ok {
			return pathErr("rename", newname, memtool.ErrExist)
		}
		odir, obase := split(oldname)
		ndir, nbase := split(newname)
		if _, err := tx.Exec(ctx, `UPDATE memtool_entries SET parent = $1, name = $2 WHERE tenant = $3 AND parent = $4 AND name = $5`,
			ndir, nbase, s.tenant, odir, obase); err != nil {
			return err
		}
		if r.dir {
			// Names are valid UTF-8 in a UTF-8 database, so substr and
			// char_length count the same characters.
			args := append(s.subtreeArgs(oldname), newname)
			if _, err := tx.Exec(ctx, `UPDATE memtool_entries SET parent = $5 || substr(parent, char_length($2) + 1) WHERE `+subtree, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return s.dbErr(ctx, "rename", oldname, err)
}

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

// Tenants lists, in byte order, the tenants that hold anything in a
// multi-tenant database (memtool migrate --all-tenants uses it). On a
// database used without tenants it fails with memtool.ErrTenancy; on an
// unused one it returns none.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("pgstore: a tenant's store has no tenants")
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var mode string
	var ids []string
	err := s.run(ctx, func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, `SELECT value FROM memtool_meta WHERE key = 'tenancy'`).Scan(&mode)
		if err != nil || mode != "multi" {
			return err
		}
		rows, err := conn.Query(ctx, tenantsQuery)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("pgstore: %w", s.classify(ctx, err))
	case mode != "multi":
		return nil, fmt.Errorf("pgstore: %w", memtool.TenancyError(false))
	}
	return ids, nil
}
