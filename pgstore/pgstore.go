package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

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

// Options configures a Store. The zero value (or nil) means the defaults.
type Options struct {
	// MaxConns is the most connections of the pool (default: pgxpool's).
	MaxConns int32
}

// Store is a memtool.Store in a PostgreSQL database. It implements
// memtool.Renamer, memtool.RemoveAller and memtool.Tenanted. The store
// returned by Open is the tenant-less one; Tenant returns the others.
type Store struct {
	pool   *pgxpool.Pool
	tenant string
	owner  bool

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
// creates or migrates its tables.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if opts != nil && opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return &Store{pool: pool, owner: true}, nil
}

// migrate brings the schema to the latest version. It holds an advisory
// lock, so that memtool processes starting at once migrate once.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS memtool_schema_version (version integer NOT NULL)`); err != nil {
		return err
	}
	var version int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM memtool_schema_version`).Scan(&version); err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("the database's schema is version %d, newer than this memtool knows (%d)", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO memtool_schema_version (version) VALUES ($1)`, v+1)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
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
	if err := claim(ctx, s.pool, "multi"); err != nil {
		return nil, err
	}
	return &Store{pool: s.pool, tenant: id, claimed: true}, nil
}

func claim(ctx context.Context, pool *pgxpool.Pool, mode string) error {
	var got string
	err := pgx.ErrNoRows
	// The statement finds no row only if another process inserted the mode
	// while it ran; the next try sees that row.
	for try := 0; try < 3 && errors.Is(err, pgx.ErrNoRows); try++ {
		err = pool.QueryRow(ctx, `WITH ins AS (
				INSERT INTO memtool_meta (key, value) VALUES ('tenancy', $1) ON CONFLICT (key) DO NOTHING RETURNING value
			)
			SELECT value FROM ins UNION ALL SELECT value FROM memtool_meta WHERE key = 'tenancy'`, mode).Scan(&got)
	}
	if err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	if got != mode {
		return fmt.Errorf("pgstore: %w", memtool.TenancyError(got == "multi"))
	}
	return nil
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
	if err := claim(ctx, s.pool, "single"); err != nil {
		return err
	}
	s.claimed = true
	return nil
}

// write runs fn in a transaction that holds the tenant's write lock: the
// writes of one tenant are serialised, across every process and machine,
// so a read-modify-write never loses an update and of racing creates or
// renames exactly one wins. Readers take no lock.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "memtool tenant "+s.tenant); err != nil {
			return err
		}
		return fn(tx)
	})
}

func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func dbErr(ctx context.Context, op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	// The tenant's write lock makes a second row at one name impossible;
	// should the primary key refuse one anyway, that is still "exists".
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		err = fmt.Errorf("%w (%v)", memtool.ErrExist, err)
	}
	return pathErr(op, name, err)
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
	if err := s.ready(ctx); err != nil {
		return memtool.FileInfo{}, err
	}
	if name == "" {
		return memtool.FileInfo{Type: fs.ModeDir}, nil
	}
	r, ok, err := s.lookup(ctx, s.pool, name)
	if err != nil {
		return memtool.FileInfo{}, dbErr(ctx, "stat", name, err)
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
		return nil, dbErr(ctx, op, name, err)
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
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.readFile(ctx, s.pool, "read", name, limit, false)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
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
		return nil, dbErr(ctx, "readdir", name, err)
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
	return dbErr(ctx, "write", name, err)
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
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
	return dbErr(ctx, "update", name, err)
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
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
	return dbErr(ctx, "mkdir", name, err)
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
	return dbErr(ctx, op, name, err)
}

// Rename moves the file or directory at oldname, with everything in it, to
// newname in one transaction.
func (s *Store) Rename(ctx context.Context, oldname, newname string) error {
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
	return dbErr(ctx, "rename", oldname, err)
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
	var mode string
	err := s.pool.QueryRow(ctx, `SELECT value FROM memtool_meta WHERE key = 'tenancy'`).Scan(&mode)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("pgstore: %w", err)
	case mode != "multi":
		return nil, fmt.Errorf("pgstore: %w", memtool.TenancyError(false))
	}
	rows, err := s.pool.Query(ctx, tenantsQuery)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return ids, nil
}
