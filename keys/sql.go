package keys

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memtool/memtool"
)

// sqlKeys keeps the keys in the table memtool_keys of the store's own
// database (PostgreSQL or SQLite), beside the store's tables. Its
// statements are written with $n parameters, which both databases take.
type sqlKeys struct {
	db    *sql.DB
	pg    bool        // PostgreSQL: the table is created under an advisory lock
	table atomic.Bool // the table is known to be there
}

const keysTable = `CREATE TABLE IF NOT EXISTS memtool_keys (
	id      TEXT PRIMARY KEY,
	name    TEXT NOT NULL,
	tenant  TEXT NOT NULL,
	scope   TEXT NOT NULL,
	hash    TEXT NOT NULL,
	created BIGINT NOT NULL,
	expires BIGINT NOT NULL,
	revoked BIGINT NOT NULL
)`

// keysLock is the PostgreSQL advisory lock under which the table is
// created, so that replicas starting at once do not race on the catalog.
const keysLock = 0x6d656d6b657973 // "memkeys"

func (s *sqlKeys) init(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(keysLock)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, keysTable); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.table.Store(true)
	return nil
}

// hasTable reports whether the table memtool_keys is there, without
// making it: a keyring opened without Create reads a database that has
// none as holding no keys, and leaves it as it was.
func (s *sqlKeys) hasTable(ctx context.Context) (bool, error) {
	if s.table.Load() {
		return true, nil
	}
	query := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'memtool_keys'`
	if s.pg {
		query = `SELECT count(*) FROM (SELECT to_regclass('memtool_keys') AS t) r WHERE t IS NOT NULL`
	}
	var n int
	if err := s.db.QueryRowContext(ctx, query).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		s.table.Store(true)
	}
	return n > 0, nil
}

func (s *sqlKeys) insert(ctx context.Context, r record) error {
	if !s.table.Load() {
		if err := s.init(ctx); err != nil {
			return err
		}
	}
	return s.execOne(ctx, errIDTaken, `INSERT INTO memtool_keys (id, name, tenant, scope, hash, created, expires, revoked)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
		r.ID, r.Name, r.Tenant, r.Scope.String(), hex.EncodeToString(r.hash), millis(r.Created), millis(r.Expires), millis(r.Revoked))
}

const columns = `id, name, tenant, scope, hash, created, expires, revoked`

func (s *sqlKeys) get(ctx context.Context, id string) (record, error) {
	if ok, err := s.hasTable(ctx); err != nil || !ok {
		return record{}, cmp.Or(err, ErrNotFound)
	}
	r, err := scanRecord(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM memtool_keys WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return record{}, ErrNotFound
	}
	return r, err
}

func (s *sqlKeys) list(ctx context.Context) ([]record, error) {
	if ok, err := s.hasTable(ctx); err != nil || !ok {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM memtool_keys ORDER BY created, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []record
	var bad []error
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil && !errors.Is(err, ErrMalformed) {
			err = malformedRow(rows, err)
		}
		if errors.Is(err, ErrMalformed) {
			bad = append(bad, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, errors.Join(bad...)
}

// malformedRow is the error of a row whose values do not scan as a
// record's, err: a hand edit that put a value of another type in a
// column, which SQLite keeps as written (revoked = 'yes'). The values of
// a row already read scan as they are, so this is no failure of the
// database: the row is malformed, and the other rows are read.
func malformedRow(rows *sql.Rows, err error) error {
	vals := make([]any, strings.Count(columns, ",")+1)
	for i := range vals {
		vals[i] = new(any)
	}
	if rows.Scan(vals...) != nil {
		return err
	}
	id := *vals[0].(*any)
	if b, ok := id.([]byte); ok {
		id = string(b)
	}
	return fmt.Errorf("key %q: %w: %w", fmt.Sprint(id), ErrMalformed, err)
}

func (s *sqlKeys) revoke(ctx context.Context, id string, at time.Time) error {
	if ok, err := s.hasTable(ctx); err != nil || !ok {
		return cmp.Or(err, ErrNotFound)
	}
	return s.execOne(ctx, ErrNotFound, `UPDATE memtool_keys SET revoked = CASE WHEN revoked = 0 THEN $1 ELSE revoked END WHERE id = $2`, millis(at), id)
}

// execOne runs a statement that changes at most one row, and returns
// none if it changed no row.
func (s *sqlKeys) execOne(ctx context.Context, none error, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return none
	}
	return nil
}

func (s *sqlKeys) close() error { return s.db.Close() }

type scanner interface{ Scan(dest ...any) error }

func scanRecord(row scanner) (record, error) {
	var r record
	var scope, hash string
	var created, expires, revoked int64
	if err := row.Scan(&r.ID, &r.Name, &r.Tenant, &scope, &hash, &created, &expires, &revoked); err != nil {
		return record{}, err
	}
	// A record is checked as Add checks a key: one changed by hand is
	// never used as a key it does not spell (no tenant, say).
	var err error
	if !ValidID(r.ID) {
		return record{}, fmt.Errorf("key %q: %w: invalid id", r.ID, ErrMalformed)
	}
	if r.Scope, err = ParseScope(scope); err != nil {
		return record{}, fmt.Errorf("key %s: %w: %w", r.ID, ErrMalformed, err)
	}
	if err := memtool.ValidateTenant(r.Tenant); err != nil {
		return record{}, fmt.Errorf("key %s: %w: %w", r.ID, ErrMalformed, err)
	}
	if r.hash, err = hex.DecodeString(hash); err != nil || len(r.hash) != sha256.Size {
		return record{}, fmt.Errorf("key %s: %w: bad hash", r.ID, ErrMalformed)
	}
	r.Created, r.Expires, r.Revoked = fromMillis(created), fromMillis(expires), fromMillis(revoked)
	return r, nil
}
