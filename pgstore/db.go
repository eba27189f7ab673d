package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree"
)

// db is the pool of one database, shared by the stores of all its
// tenants. It is the sqltree.DB of their trees.
type db struct {
	pool      *pgxpool.Pool
	opTimeout time.Duration
}

var _ sqltree.DB = (*db)(nil)

// errNoAnswer is the cause of an operation's context when OpTimeout ends it.
var errNoAnswer = errors.New("no answer from the server")

// Op bounds one operation of the store by OpTimeout.
func (d *db) Op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d.opTimeout, errNoAnswer)
}

// run runs fn on a connection of the pool. A server that restarted, or
// ended the store's sessions, leaves the pool's connections dead: should fn
// find its connection dead before it sent a commit, nothing was done, so
// the pool drops its connections and fn runs once more, on a new one.
func (d *db) run(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	for try := 0; ; try++ {
		conn, err := d.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		err = fn(conn.Conn())
		lost := err != nil && conn.Conn().IsClosed()
		conn.Release()
		if !lost || try > 0 || ctx.Err() != nil || errors.Is(err, errCommitUnknown) {
			return err
		}
		d.pool.Reset()
	}
}

// errCommitUnknown marks a commit whose answer never came: the server may
// or may not have made the change, so it is not tried again.
var errCommitUnknown = errors.New("the connection was lost during the commit, so the change may or may not have been made")

// commit runs fn in a transaction on conn and commits it.
func (d *db) commit(ctx context.Context, conn *pgx.Conn, fn func(tx pgx.Tx) error) error {
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

// Write runs fn in a transaction that holds the tenant's write lock: the
// writes of one tenant are serialised, across every process and machine,
// so a read-modify-write never loses an update and of racing creates or
// renames exactly one wins. Readers take no lock.
func (d *db) Write(ctx context.Context, tenant string, fn func(q sqltree.Querier) error) error {
	return d.run(ctx, func(conn *pgx.Conn) error {
		return d.commit(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, tenantLockQuery, tenantLockKey(tenant)); err != nil {
				return err
			}
			return fn(querier{tx})
		})
	})
}

// tenantLockQuery takes the write lock of the tenant tenantLockKey names,
// until the transaction ends.
const tenantLockQuery = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

func tenantLockKey(tenant string) string { return "memtool tenant " + tenant }

// Read runs fn in a read-only transaction at repeatable read: one
// snapshot.
func (d *db) Read(ctx context.Context, fn func(q sqltree.Querier) error) error {
	return d.run(ctx, func(conn *pgx.Conn) error {
		return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			return fn(querier{tx})
		})
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

// Classify turns the failure of an operation bounded by ctx into the
// error a caller acts on: a timeout of the operation's own, the caller's
// cancellation, or memtool's error for a PostgreSQL error code.
func (d *db) Classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	switch ctxErr := ctx.Err(); {
	case errors.Is(err, errCommitUnknown):
		return err
	case context.Cause(ctx) == errNoAnswer:
		// Not wrapped: the caller did not cancel anything.
		return fmt.Errorf("PostgreSQL did not answer within %v (%v)", d.opTimeout, err)
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

func (d *db) Query(ctx context.Context, fn func(q sqltree.Querier) error) error {
	return d.run(ctx, func(conn *pgx.Conn) error { return fn(querier{conn}) })
}

// WriteMeta runs fn's statements outside a transaction: each claims or
// reads memtool_meta alone.
func (d *db) WriteMeta(ctx context.Context, fn func(q sqltree.Querier) error) error {
	return d.Query(ctx, fn)
}

// querier is a connection or a transaction as a sqltree.Querier.
type querier struct {
	q interface {
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	}
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqltree.Row {
	return q.q.QueryRow(ctx, query, args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqltree.Rows, error) {
	return q.q.Query(ctx, query, args...)
}

func (q querier) Exec(ctx context.Context, query string, args ...any) error {
	_, err := q.q.Exec(ctx, query, args...)
	return err
}
