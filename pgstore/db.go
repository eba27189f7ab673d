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
	pool        *pgxpool.Pool
	opTimeout   time.Duration
	lockTimeout time.Duration
	writers     gates
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
		lost, err := d.once(ctx, fn)
		if !lost || try > 0 || ctx.Err() != nil || errors.Is(err, errCommitUnknown) {
			return err
		}
		d.pool.Reset()
	}
}

// once runs fn on a connection of the pool and gives it back however fn
// ends, a panic included (the pool closes a connection left in a
// transaction); lost reports that fn failed on a dead connection.
func (d *db) once(ctx context.Context, fn func(conn *pgx.Conn) error) (lost bool, err error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	err = fn(conn.Conn())
	return err != nil && conn.Conn().IsClosed(), err
}

// errCommitUnknown marks a commit whose answer never came: the server may
// or may not have made the change, so it is not tried again.
var errCommitUnknown = fmt.Errorf("the connection was lost during the commit: %w", memtool.ErrOutcomeUnknown)

// txOptions are those of every transaction of the store: READ COMMITTED,
// whatever the session's default (default_transaction_isolation, set for
// the server, the database or the role), so that each statement after
// the one that waits for a lock reads what the lock's last holder
// committed. At REPEATABLE READ or SERIALIZABLE the snapshot would be the
// one the lock's statement took before it waited: a write would act on
// what it read before the last one committed (a file written into a
// directory RemoveAll had removed), or fail with a serialization error.
var txOptions = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// commit runs fn in a transaction on conn and commits it.
func (d *db) commit(ctx context.Context, conn *pgx.Conn, fn func(tx pgx.Tx) error) error {
	tx, err := conn.BeginTx(ctx, txOptions)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // should fn panic; after a commit it does nothing
	if err := fn(tx); err != nil {
		tx.Rollback(ctx)
		return err
	}
	return commitErr(conn, tx.Commit(ctx))
}

// commitErr is the error of a commit on conn that returned err: one whose
// answer was lost with the connection is errCommitUnknown, unless pgx
// says it failed before anything was sent (a context already done), or
// the server answered it with an ERROR (a statement refused, so that the
// COMMIT did not run, or the COMMIT refused): then nothing was committed,
// whatever became of the connection after.
func commitErr(conn *pgx.Conn, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.SeverityUnlocalized == "ERROR" {
		return err
	}
	if err != nil && conn.IsClosed() && !pgconn.SafeToRetry(err) {
		// Not wrapped: the model must not read "nothing changed".
		return fmt.Errorf("%w (%v)", errCommitUnknown, err)
	}
	return err
}

// Write runs fn in a transaction that holds the tenant's write lock: the
// writes of one tenant are serialised, across every process and machine,
// so a read-modify-write never loses an update and of racing creates or
// renames exactly one wins. Readers take no lock.
//
// The transaction's BEGIN and the lock go to the server with fn's first
// statement, in one round trip (a pipeline); the statements without rows
// that follow it go with the COMMIT, in one more, so that the tenant's
// lock is held for two round trips of a write, not three. An answer to
// that last round trip lost with the connection is errCommitUnknown (the
// change may or may not have been made); a failed statement aborts the
// transaction, so that the COMMIT commits nothing, and is what Write
// returns.
//
// Within the process, the writes of one tenant take turns before they take
// a connection (see gates).
func (d *db) Write(ctx context.Context, tenant string, fn func(q sqltree.Querier) error) error {
	leave, err := d.writers.enter(ctx, tenant, d.lockTimeout)
	if err != nil {
		return err
	}
	defer leave()
	return d.run(ctx, func(conn *pgx.Conn) error {
		w := &writer{conn: conn, lockKey: tenantLockKey(tenant)}
		returned := false
		defer func() {
			if !returned && w.tx != nil {
				// fn panicked: end the transaction, and the tenant's
				// lock with it, before the connection goes back.
				w.tx.Rollback(ctx)
			}
		}()
		err := fn(w)
		returned = true
		if w.tx == nil {
			return err // nothing was sent
		}
		if err != nil {
			w.tx.Rollback(ctx)
			return err
		}
		return w.commit(ctx)
	})
}

// commit sends the statements w holds back with the COMMIT, in one batch.
func (w *writer) commit(ctx context.Context) error {
	if w.pending == nil {
		return commitErr(w.conn, w.tx.Commit(ctx))
	}
	b := w.pending
	w.pending = nil
	b.Queue("commit") // as pgx spells it
	br := w.tx.SendBatch(ctx, b)
	var err error
	beforeCommit := false // err is the answer to a statement before the COMMIT
	for i := range b.Len() {
		if _, err = br.Exec(); err != nil {
			beforeCommit = i < b.Len()-1
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil && !w.conn.IsClosed() {
		// A statement failed, so the transaction was aborted and the
		// COMMIT not run: end it.
		w.tx.Rollback(ctx)
	}
	if notRun(err, beforeCommit) {
		return err
	}
	return commitErr(w.conn, err)
}

// notRun reports whether err, the failure of a batch that ends with the
// COMMIT, says that the COMMIT never ran, even on a connection lost since:
// pgx failed to prepare the batch (it executes nothing until every
// statement is prepared), or the server answered a statement before the
// COMMIT with an error. The server runs a batch in order, and an error
// skips the rest of it (ERROR) or ends the session (FATAL, as
// pg_terminate_backend or a restart gives while the transaction waits for
// its change): either way it did not reach the COMMIT. On a lost
// connection the write then runs again on a new one (db.run).
func notRun(err error, beforeCommit bool) bool {
	var pre pgx.ErrPreprocessingBatch
	var pgErr *pgconn.PgError
	return errors.As(err, &pre) || beforeCommit && errors.As(err, &pgErr)
}

// flush sends the statements w holds back, before a statement whose rows
// fn reads.
func (w *writer) flush(ctx context.Context) error {
	if w.pending == nil {
		return nil
	}
	b := w.pending
	w.pending = nil
	return w.tx.SendBatch(ctx, b).Close()
}

// tenantLockQuery takes the write lock of the tenant tenantLockKey names,
// until the transaction ends.
const tenantLockQuery = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

func tenantLockKey(tenant string) string { return "memtool tenant " + tenant }

// writer is the sqltree.Querier of Write: its first statement begins the
// transaction and takes the lock, in one batch; the others run in the
// transaction.
type writer struct {
	conn    *pgx.Conn
	lockKey string
	tx      pgx.Tx     // nil until the first statement
	pending *pgx.Batch // statements without rows after the first, not sent yet
}

// begin sends BEGIN, the lock and query in one batch, and reads query's
// result with read.
func (w *writer) begin(ctx context.Context, read func(br pgx.BatchResults) error, query string, args ...any) error {
	b := &pgx.Batch{}
	b.BeginTx(txOptions)
	b.Queue(tenantLockQuery, w.lockKey)
	b.Queue(query, args...)
	br := w.conn.SendBatch(ctx, b)
	w.tx = br.Tx()
	err := func() error {
		for range 2 { // BEGIN, lock
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return read(br)
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// execResult reads the result of a statement that returns no rows.
func execResult(br pgx.BatchResults) error {
	_, err := br.Exec()
	return err
}

func (w *writer) QueryRow(ctx context.Context, query string, args ...any) sqltree.Row {
	if w.tx != nil {
		if err := w.flush(ctx); err != nil {
			return errRow{err}
		}
		return w.tx.QueryRow(ctx, query, args...)
	}
	return firstRow{w, ctx, query, args}
}

// errRow is a row whose statement was not sent, for err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// firstRow is the row of the first statement of a writer, sent when it is
// scanned.
type firstRow struct {
	w     *writer
	ctx   context.Context
	query string
	args  []any
}

func (r firstRow) Scan(dest ...any) error {
	return r.w.begin(r.ctx, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(dest...)
	}, r.query, r.args...)
}

func (w *writer) Query(ctx context.Context, query string, args ...any) (sqltree.Rows, error) {
	if w.tx == nil {
		// No write of the tree's starts with a query of many rows: begin
		// with the lock alone.
		if err := w.begin(ctx, execResult, "SELECT 1"); err != nil {
			return nil, err
		}
	}
	if err := w.flush(ctx); err != nil {
		return nil, err
	}
	return w.tx.Query(ctx, query, args...)
}

// Exec sends the first statement of a write; it holds back the others,
// which go with the COMMIT (or the next statement whose rows are read), so
// their errors are the commit's.
func (w *writer) Exec(ctx context.Context, query string, args ...any) error {
	if w.tx == nil {
		return w.begin(ctx, execResult, query, args...)
	}
	if w.pending == nil {
		w.pending = &pgx.Batch{}
	}
	w.pending.Queue(query, args...)
	return nil
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

// WriteMeta runs fn's statements, which claim or read memtool_meta, in a
// transaction at READ COMMITTED (txOptions): outside one, a statement runs
// at the session's default level, and at REPEATABLE READ or SERIALIZABLE
// the claim's INSERT … ON CONFLICT DO NOTHING fails (could not serialize
// access) when another process records the mode as it runs, instead of
// leaving it be. A claim records a mode only if none is, so it may run
// again should its connection be lost, its commit included.
func (d *db) WriteMeta(ctx context.Context, fn func(q sqltree.Querier) error) error {
	return d.run(ctx, func(conn *pgx.Conn) error {
		return pgx.BeginTxFunc(ctx, conn, txOptions, func(tx pgx.Tx) error { return fn(querier{tx}) })
	})
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
