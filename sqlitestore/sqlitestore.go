package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/memtool/memtool"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// schema is the whole database. Every key starts with the tenant ("" in a
// single-tenant store); an entry is keyed by its parent directory's full
// name and its base name, so a directory's entries are one range of the
// primary key.
const schema = `
CREATE TABLE IF NOT EXISTS memtool_meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memtool_entries (
	tenant TEXT NOT NULL,
	parent TEXT NOT NULL,
	name   TEXT NOT NULL,
	dir    INTEGER NOT NULL,
	size   INTEGER NOT NULL,
	data   BLOB,
	PRIMARY KEY (tenant, parent, name)
) WITHOUT ROWID;
INSERT OR IGNORE INTO memtool_meta (key, value) VALUES ('schema_version', '1');
`

// schemaVersion is the version of schema. A later version adds its
// migrations here and refuses files newer than it knows.
const schemaVersion = "1"

// db is one open database file, shared by the stores of all its tenants.
type db struct {
	path        string
	r           *sql.DB // reads: deferred transactions, WAL snapshots
	w           *sql.DB // writes: BEGIN IMMEDIATE, one connection; nil when readOnly
	busyTimeout time.Duration
	readOnly    bool // the file cannot be written: every write fails with ErrReadOnly
}

// Store is a memtool.Store in an SQLite database file. It implements
// memtool.Renamer, memtool.RemoveAller and memtool.Tenanted. The store
// returned by Open is the tenant-less one; Tenant returns the others.
type Store struct {
	db     *db
	tenant string
	owner  bool // Close closes the database

	claimMu sync.Mutex
	claimed bool
}

var (
	_ memtool.Store       = (*Store)(nil)
	_ memtool.Renamer     = (*Store)(nil)
	_ memtool.RemoveAller = (*Store)(nil)
	_ memtool.Tenanted    = (*Store)(nil)
)

// Options configures a Store. nil, or a zero field, means the default.
type Options struct {
	// BusyTimeout bounds a write's whole wait for the database's write
	// lock, held by another write of the store, another connection or
	// another process: past it the method fails with an error wrapping
	// memtool.ErrBusy and changes nothing. Reads wait for it only in the
	// rare cases a writer shuts them out (see the package doc). Default:
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
}

// DefaultBusyTimeout is the BusyTimeout of a store opened without one.
const DefaultBusyTimeout = 5 * time.Second

// dsn is the driver's name for the database file at path. A read-only
// file is opened with SQLite's mode=ro, and without the pragmas that
// would write to it.
func dsn(path, txlock string, busyTimeout time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	if readOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Add("_pragma", "foreign_keys(OFF)")
	q.Set("_txlock", txlock)
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens the store in the database file at path (absolute), creating
// the file and its tables if they are missing, with the default Options.
func Open(path string) (*Store, error) {
	return OpenWith(path, nil)
}

// OpenWith is Open with Options (nil means the defaults). A database file
// that exists but cannot be written (a read-only file, directory or file
// system) is opened read-only: reads work where SQLite can serve them, and
// every write fails with an error wrapping memtool.ErrReadOnly.
func OpenWith(path string, opts *Options) (*Store, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("sqlitestore: %q is not an absolute path", path)
	}
	d := &db{path: path, busyTimeout: DefaultBusyTimeout}
	if opts != nil && opts.BusyTimeout > 0 {
		d.busyTimeout = opts.BusyTimeout
	}
	// The memory is private: create the file 0600 (SQLite gives its WAL
	// and shared-memory files the same mode).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	switch {
	case err == nil:
		f.Close()
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		if _, statErr := os.Stat(path); statErr != nil {
			return nil, fmt.Errorf("sqlitestore: %w (%v)", memtool.ErrReadOnly, err)
		}
		d.readOnly = true
	default:
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	d.r, err = sql.Open("sqlite", dsn(path, "deferred", d.busyTimeout, d.readOnly))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	if !d.readOnly {
		d.w, err = sql.Open("sqlite", dsn(path, "immediate", d.busyTimeout, false))
		if err != nil {
			d.r.Close()
			return nil, fmt.Errorf("sqlitestore: %w", err)
		}
		d.w.SetMaxOpenConns(1)
	}
	if err := d.init(); err != nil {
		d.close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, d.classify(err))
	}
	return &Store{db: d, owner: true}, nil
}

// init checks the schema, and creates it if the file has none. Only a new
// file needs the write lock: a store opens while another process writes.
func (d *db) init() error {
	ctx := context.Background()
	var version string
	err := d.r.QueryRowContext(ctx, `SELECT value FROM memtool_meta WHERE key = 'schema_version'`).Scan(&version)
	if err != nil && !d.readOnly {
		// The schema is created in a write transaction, so that processes
		// opening a new file at once create it once.
		err = d.write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.Exec(schema); err != nil {
				return err
			}
			return tx.QueryRow(`SELECT value FROM memtool_meta WHERE key = 'schema_version'`).Scan(&version)
		})
	}
	if err != nil {
		return err
	}
	if version != schemaVersion {
		return fmt.Errorf("the file's schema is version %s; this memtool knows version %s", version, schemaVersion)
	}
	return nil
}

func (d *db) close() error {
	err := d.r.Close()
	if d.w != nil {
		err = errors.Join(err, d.w.Close())
	}
	return err
}

// Close closes the database. Closing a tenant's store does nothing; close
// the store Open returned.
func (s *Store) Close() error {
	if !s.owner {
		return nil
	}
	return s.db.close()
}

// Tenant returns the store of tenant id, which must pass
// memtool.ValidateTenant. The first call marks the database multi-tenant
// for good; on a database already used without a tenant it fails with
// memtool.ErrTenancy. The returned store shares the database and needs no
// Close of its own.
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	if s.tenant != "" {
		return nil, fmt.Errorf("sqlitestore: tenant %q: a tenant's store has no tenants", id)
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, err
	}
	if err := s.db.claim(ctx, "multi"); err != nil {
		return nil, err
	}
	t := &Store{db: s.db, tenant: id}
	t.claimed = true
	return t, nil
}

// claim records the tenancy mode on first use and checks it afterwards. A
// read-only file that no use has claimed stays unclaimed: nothing can be
// written to it in either mode.
func (d *db) claim(ctx context.Context, mode string) error {
	var got string
	err := d.r.QueryRowContext(ctx, `SELECT value FROM memtool_meta WHERE key = 'tenancy'`).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		if d.readOnly {
			return nil
		}
		err = d.write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memtool_meta (key, value) VALUES ('tenancy', ?)`, mode); err != nil {
				return err
			}
			return tx.QueryRowContext(ctx, `SELECT value FROM memtool_meta WHERE key = 'tenancy'`).Scan(&got)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlitestore %s: %w", d.path, d.classify(err))
	}
	if got != mode {
		return fmt.Errorf("sqlitestore %s: %w", d.path, memtool.TenancyError(got == "multi"))
	}
	return nil
}

// ready makes sure the tenant-less store claims the database as
// single-tenant before its first use.
func (s *Store) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.claimed {
		return nil
	}
	if err := s.db.claim(ctx, "single"); err != nil {
		return err
	}
	s.claimed = true
	return nil
}

// write runs fn in a transaction that holds the file's write lock. The
// wait for the lock, first for the one write connection (another
// goroutine's write) and then for the file (another process's or
// connection's), ends at busyTimeout after the call, or when ctx ends.
func (d *db) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if d.readOnly {
		return fmt.Errorf("%w: the database file cannot be written", memtool.ErrReadOnly)
	}
	deadline := time.Now().Add(d.busyTimeout)
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	conn, err := d.w.Conn(waitCtx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return d.busy("another write of this store")
		}
		return err
	}
	defer conn.Close()
	// BEGIN IMMEDIATE waits for the file's lock as long as busy_timeout
	// says, and no longer than ctx (the driver's busy handler watches it).
	wait := time.Until(deadline)
	if wait < time.Millisecond {
		return d.busy("another write of this store")
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", wait.Milliseconds())); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		if isCode(err, sqlite3.SQLITE_BUSY) && ctx.Err() == nil {
			return d.busy("another connection or process")
		}
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// busy is the error of a write that waited busyTimeout for the lock.
func (d *db) busy(holder string) error {
	return fmt.Errorf("%w: %s held the write lock of %s for %v", memtool.ErrBusy, holder, d.path, d.busyTimeout)
}

func (d *db) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// dbErr wraps a database failure; cancellation stays recognisable, and
// SQLite's busy, full and read-only codes become memtool's errors.
func (d *db) dbErr(ctx context.Context, op, name string, err error) error {
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
	return pathErr(op, name, d.classify(err))
}

// classify wraps err with the memtool error its SQLite code stands for.
// SQLite reports a write that found no space (ENOSPC) as SQLITE_FULL. On a
// read-only file, SQLITE_CANTOPEN is SQLite unable to create the WAL's
// files beside it, so it is read-only too.
func (d *db) classify(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) || errors.Is(err, memtool.ErrBusy) || errors.Is(err, memtool.ErrNoSpace) || errors.Is(err, memtool.ErrReadOnly) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY:
		return fmt.Errorf("%w (%v)", memtool.ErrBusy, err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w (%v)", memtool.ErrNoSpace, err)
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("%w (%v)", memtool.ErrReadOnly, err)
	case sqlite3.SQLITE_CANTOPEN:
		if d.readOnly {
			return fmt.Errorf("%w (SQLite cannot read a WAL database file on a read-only file system unless its -wal and -shm files exist: %v)", memtool.ErrReadOnly, err)
		}
	}
	return err
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

// The queries whose plans TestPlans checks: each must be a range of the
// primary key.
const (
	lookupQuery = `SELECT dir, size FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`
	listQuery   = `SELECT name, dir, size FROM memtool_entries WHERE tenant = ? AND parent = ?`
)

// querier is what both transactions and databases offer.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// lookup returns the entry at a non-root name; ok is false if it is missing.
func (s *Store) lookup(ctx context.Context, q querier, name string) (row, bool, error) {
	dir, base := split(name)
	var r row
	err := q.QueryRowContext(ctx, lookupQuery, s.tenant, dir, base).Scan(&r.dir, &r.size)
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, false, nil
	}
	return r, err == nil, err
}

// checkParent returns the error for op on name unless name's parent is a
// directory.
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

func (s *Store) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := s.ready(ctx); err != nil {
		return memtool.FileInfo{}, err
	}
	if name == "" {
		return memtool.FileInfo{Type: fs.ModeDir}, nil
	}
	r, ok, err := s.lookup(ctx, s.db.r, name)
	if err != nil {
		return memtool.FileInfo{}, s.db.dbErr(ctx, "stat", name, err)
	}
	if !ok {
		return memtool.FileInfo{}, pathErr("stat", name, memtool.ErrNotExist)
	}
	_, base := split(name)
	return info(base, r), nil
}

func info(base string, r row) memtool.FileInfo {
	if r.dir {
		return memtool.FileInfo{Name: base, Type: fs.ModeDir}
	}
	return memtool.FileInfo{Name: base, Size: r.size}
}

// readFile reads the file at name in q.
func (s *Store) readFile(ctx context.Context, q querier, op, name string, limit int64) ([]byte, error) {
	if name == "" {
		return nil, pathErr(op, name, memtool.ErrIsDir)
	}
	dir, base := split(name)
	var (
		isDir bool
		size  int64
		data  []byte
	)
	err := q.QueryRowContext(ctx, `SELECT dir, size, CASE WHEN size <= ? THEN data END FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`,
		limit, s.tenant, dir, base).Scan(&isDir, &size, &data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, pathErr(op, name, memtool.ErrNotExist)
	case err != nil:
		return nil, s.db.dbErr(ctx, op, name, err)
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
	return s.readFile(ctx, s.db.r, "read", name, limit)
}

func (s *Store) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	var out []memtool.FileInfo
	err := s.db.read(ctx, func(tx *sql.Tx) error {
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
		rows, err := tx.QueryContext(ctx, listQuery, s.tenant, name)
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
		return nil, s.db.dbErr(ctx, "readdir", name, err)
	}
	return out, nil
}

func (s *Store) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("write", name, memtool.ErrIsDir)
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
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
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, 0, ?, ?)`,
			s.tenant, dir, base, len(data), nonNil(data))
		return err
	})
	return s.db.dbErr(ctx, "write", name, err)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func (s *Store) Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	var fnErr error
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		old, err := s.readFile(ctx, tx, "update", name, limit)
		if err != nil {
			return err
		}
		updated, err := fn(old)
		if err != nil {
			fnErr = err
			return err
		}
		dir, base := split(name)
		_, err = tx.ExecContext(ctx, `UPDATE memtool_entries SET size = ?, data = ? WHERE tenant = ? AND parent = ? AND name = ?`,
			len(updated), nonNil(updated), s.tenant, dir, base)
		return err
	})
	if fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	return s.db.dbErr(ctx, "update", name, err)
}

func (s *Store) Mkdir(ctx context.Context, name string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr("mkdir", name, memtool.ErrExist)
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if err := s.checkParent(ctx, tx, "mkdir", name); err != nil {
			return err
		}
		if _, ok, err := s.lookup(ctx, tx, name); err != nil {
			return err
		} else if ok {
			return pathErr("mkdir", name, memtool.ErrExist)
		}
		dir, base := split(name)
		_, err := tx.ExecContext(ctx, `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, 1, 0, NULL)`, s.tenant, dir, base)
		return err
	})
	return s.db.dbErr(ctx, "mkdir", name, err)
}

func (s *Store) Remove(ctx context.Context, name string) error {
	return s.remove(ctx, "remove", name, false)
}

// RemoveAll removes the file or directory at name and everything in it, in
// one transaction.
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	return s.remove(ctx, "removeall", name, true)
}

// below selects the entries of a tenant below a directory: those whose
// parent is the directory (children) and those whose parent is inside it
// (deeper, between name+"/" and name+"0": '0' follows '/' in byte order).
// They are two statements because SQLite searches the primary key for
// each, but not for their OR.
var below = []struct {
	cond string
	args func(name string) []any
}{
	{`parent = ?`, func(name string) []any { return []any{name} }},
	{`parent >= ? AND parent < ?`, func(name string) []any { return []any{name + "/", name + "0"} }},
}

func (s *Store) remove(ctx context.Context, op, name string, all bool) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if name == "" {
		return pathErr(op, name, fs.ErrInvalid)
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		r, ok, err := s.lookup(ctx, tx, name)
		switch {
		case err != nil:
			return err
		case !ok:
			return pathErr(op, name, memtool.ErrNotExist)
		}
		if r.dir {
			if all {
				for _, b := range below {
					if _, err := tx.ExecContext(ctx, `DELETE FROM memtool_entries WHERE tenant = ? AND `+b.cond, append([]any{s.tenant}, b.args(name)...)...); err != nil {
						return err
					}
				}
			} else {
				var one int
				err := tx.QueryRowContext(ctx, `SELECT 1 FROM memtool_entries WHERE tenant = ? AND parent = ? LIMIT 1`, s.tenant, name).Scan(&one)
				if err == nil {
					return pathErr(op, name, memtool.ErrNotEmpty)
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
		}
		dir, base := split(name)
		_, err = tx.ExecContext(ctx, `DELETE FROM memtool_entries WHERE tenant = ? AND parent = ? AND name = ?`, s.tenant, dir, base)
		return err
	})
	return s.db.dbErr(ctx, op, name, err)
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
	err := s.db.write(ctx, func(tx *sql.Tx) error {
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
		if _, err := tx.ExecContext(ctx, `UPDATE memtool_entries SET parent = ?, name = ? WHERE tenant = ? AND parent = ? AND name = ?`,
			ndir, nbase, s.tenant, odir, obase); err != nil {
			return err
		}
		if r.dir {
			// Names are valid UTF-8, so substr and length count the same
			// characters.
			// newname is not inside oldname, so what the first statement
			// moves is out of the second's range.
			for _, b := range below {
				args := append([]any{newname, oldname, s.tenant}, b.args(oldname)...)
				if _, err := tx.ExecContext(ctx, `UPDATE memtool_entries SET parent = ? || substr(parent, length(?) + 1) WHERE tenant = ? AND `+b.cond, args...); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return s.db.dbErr(ctx, "rename", oldname, err)
}

// isCode reports whether err is SQLite's primary result code code.
func isCode(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == code
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
		return nil, fmt.Errorf("sqlitestore: a tenant's store has no tenants")
	}
	var mode string
	err := s.db.r.QueryRowContext(ctx, `SELECT value FROM memtool_meta WHERE key = 'tenancy'`).Scan(&mode)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, s.db.dbErr(ctx, "tenants", "", err)
	case mode != "multi":
		return nil, fmt.Errorf("sqlitestore %s: %w", s.db.path, memtool.TenancyError(false))
	}
	rows, err := s.db.r.QueryContext(ctx, tenantsQuery)
	if err != nil {
		return nil, s.db.dbErr(ctx, "tenants", "", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.db.dbErr(ctx, "tenants", "", err)
		}
		ids = append(ids, id)
	}
	return ids, s.db.dbErr(ctx, "tenants", "", rows.Err())
}
