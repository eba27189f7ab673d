package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree"
	"github.com/memtool/memtool/internal/wait"
	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// db is one open database file, shared by the stores of all its tenants.
// It is the sqltree.DB of their trees.
type db struct {
	path        string  // the database file, every symbolic link resolved, as SQLite names it
	given       string  // the path Open was given, where it differs from path (symbolic links)
	r           *sql.DB // reads: deferred transactions, WAL snapshots
	w           *sql.DB // writes: BEGIN IMMEDIATE, one connection; nil when readOnly
	busyTimeout time.Duration
	readOnly    bool          // the file cannot be written: every write fails with ErrReadOnly
	file        os.FileInfo   // the file at path when the store opened it
	noIndex     bool          // a read-only file of schema version 1, without the search index
	wal         *walSync      // makes the commits durable (walsync.go)
	rs, ws      *stmts        // the prepared statements of r and w (ws nil when readOnly)
	turn        chan struct{} // held by the write whose turn it is (takeTurn)
}

var _ sqltree.DB = (*db)(nil)

func (d *db) close() error {
	d.wal.closing.Store(true) // closing the last connection may remove the WAL
	defer d.wal.close()
	err := errors.Join(d.rs.close(), d.r.Close())
	if d.w != nil {
		err = errors.Join(err, d.ws.close(), d.w.Close())
	}
	return err
}

// Op bounds nothing: a write's wait is bounded by busyTimeout.
func (d *db) Op(ctx context.Context) (context.Context, context.CancelFunc) {
	return ctx, func() {}
}

func (d *db) Query(ctx context.Context, fn func(q sqltree.Querier) error) error {
	return fn(querier{stmts: d.rs})
}

// Write runs fn under the file's write lock, which serves every tenant.
func (d *db) Write(ctx context.Context, tenant string, fn func(q sqltree.Querier) error) error {
	return d.write(ctx, func(tx *sql.Tx) error { return fn(querier{stmts: d.ws, tx: tx}) })
}

func (d *db) WriteMeta(ctx context.Context, fn func(q sqltree.Querier) error) error {
	return d.Write(ctx, "", fn)
}

// write runs fn in a transaction that holds the file's write lock. The
// wait for the lock, first for this store's other writes (which take
// turns in the order they came: see takeTurn) and then for the file
// (another process's or connection's), ends at busyTimeout after the
// call, or when ctx ends.
func (d *db) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if d.readOnly {
		return fmt.Errorf("%w: the database file cannot be written", memtool.ErrReadOnly)
	}
	if err := d.wal.refused(); err != nil {
		return err
	}
	deadline := time.Now().Add(d.busyTimeout)
	if err := d.takeTurn(ctx, deadline); err != nil {
		return err
	}
	// The next write may begin while this one's fsync runs, and be made
	// durable by it or with it: commit ends the turn.
	n, seen, err := d.commit(ctx, deadline, fn)
	switch {
	case seen:
		return d.settled(err)
	case err != nil:
		return err
	}
	return d.wal.durable(n)
}

// commit runs fn in a transaction on the write connection and commits it,
// in this write's turn, which it ends (should fn panic too). It returns
// the commit's number, or the error; seen reports an error of a write that
// read the store (fn's, or the commit's), which may have seen commits not
// yet durable (settled).
func (d *db) commit(ctx context.Context, deadline time.Time, fn func(tx *sql.Tx) error) (n uint64, seen bool, err error) {
	defer func() { <-d.turn }() // after the connection went back
	d.ws.preparePending(ctx, deadline)
	conn, err := d.conn(ctx, deadline)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close()
	tx, err := d.begin(ctx, conn, deadline)
	if err != nil {
		return 0, false, err
	}
	// Should fn panic, the transaction ends (and the file's write lock
	// with it) before the connection goes back, which would otherwise
	// wait for it for good. After a commit or rollback this does nothing.
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		tx.Rollback()
		return 0, true, err
	}
	// A write that took its turn as an fsync failed commits nothing.
	if err := errors.Join(d.moved(), d.wal.refused()); err != nil {
		tx.Rollback()
		return 0, false, err
	}
	if n, err = d.wal.commit(tx.Commit); err != nil {
		return 0, true, err
	}
	return n, false, nil
}

// takeTurn waits for this store's writes that came before this one: they
// take the write connection in the order they asked for it (a channel
// wakes its waiting senders in order), where database/sql would hand a
// connection given back to a waiter chosen at random, so that under many
// writers some waited far longer than others. It fails with ErrBusy at
// deadline, and with ctx's error when ctx ends.
func (d *db) takeTurn(ctx context.Context, deadline time.Time) error {
	err := wait.Turn(ctx, d.turn, deadline)
	if errors.Is(err, wait.ErrDeadline) {
		return d.busy("another write of this store")
	}
	return err
}

// settled returns err, the answer of a write that made no commit (a
// create that found the name taken, an edit that changed nothing), once
// the commits of this store it may have seen are durable: an answer must
// not rest on a change that a power loss could still take back. An fsync
// that fails leaves that unknown, and says so.
func (d *db) settled(err error) error {
	if syncErr := d.wal.durable(d.wal.last.Load()); syncErr != nil {
		return syncErr
	}
	return err
}

// Settle is sqltree.Settler: it returns err, the answer of a read made
// outside a write (Mkdir's finding that the name is taken), once the
// commits of this store the read may have seen are durable, as settled
// does for a write.
func (d *db) Settle(ctx context.Context, err error) error {
	if syncErr := d.wal.settle(ctx); syncErr != nil {
		return syncErr
	}
	return err
}

// open returns a pool of connections to the file the store opened, with
// dsn. A connection opened once the file at the path is another (deleted
// or replaced) fails: it would read that other file, with the
// write-ahead log of the store's own laid over it, while the pool's older
// connections read the store's.
func (d *db) open(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(connector{c, d}), nil
}

// connector opens connections that check, once SQLite has opened the
// file, that it is still the one at the path.
type connector struct {
	c driver.Connector
	d *db
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.d.moved(); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func (c connector) Driver() driver.Driver { return c.c.Driver() }

// The pauses between a write's tries to take the file's write lock: from
// minBusyPause, doubling up to maxBusyPause, each shortened by a random
// part of itself so that waiting processes do not try in step.
const (
	minBusyPause = 50 * time.Microsecond
	maxBusyPause = time.Millisecond
)

// conn takes the one write connection, which is free in a write's turn
// (takeTurn) unless held from outside the writes (a test does), waiting
// for it until deadline or the end of ctx. Opening the
// connection turns a file not yet in WAL mode (a new one) to WAL, for
// which SQLite does not wait: it fails at once while another connection
// or process holds a lock of the file (another store opening it too), and
// is tried again as begin tries.
func (d *db) conn(ctx context.Context, deadline time.Time) (*sql.Conn, error) {
	pause := minBusyPause
	for {
		waitCtx, cancel := context.WithDeadline(ctx, deadline)
		conn, err := d.w.Conn(waitCtx)
		cancel()
		switch {
		case err == nil:
			return conn, nil
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			return nil, d.busy("the write connection's holder")
		case !isCode(err, sqlite3.SQLITE_BUSY):
			return nil, err
		}
		if err := d.pause(ctx, deadline, &pause); err != nil {
			return nil, err
		}
	}
}

// begin begins a BEGIN IMMEDIATE transaction on conn, trying again while
// another connection or process holds the file's write lock, until
// deadline or the end of ctx. The write connections have no busy timeout
// of SQLite's: its handler sleeps 1, 2, 5, 10... ms between tries, far
// longer than a write holds the lock, so waiting writers would leave the
// lock idle most of the time.
func (d *db) begin(ctx context.Context, conn *sql.Conn, deadline time.Time) (*sql.Tx, error) {
	pause := minBusyPause
	for {
		tx, err := conn.BeginTx(ctx, nil)
		if err == nil || !isCode(err, sqlite3.SQLITE_BUSY) {
			return tx, err
		}
		if err := d.pause(ctx, deadline, &pause); err != nil {
			return nil, err
		}
	}
}

// pause waits before the next try to take the file's lock: *pause,
// shortened by a random part of itself, which it then doubles up to
// maxBusyPause. It fails with ErrBusy past deadline, and with ctx's error
// when ctx ends.
func (d *db) pause(ctx context.Context, deadline time.Time, pause *time.Duration) error {
	left := time.Until(deadline)
	if left <= 0 {
		return d.busy("another connection or process")
	}
	if err := wait.Sleep(ctx, min(left, *pause-rand.N(*pause/2))); err != nil {
		return err
	}
	*pause = min(2**pause, maxBusyPause)
	return nil
}

// busy is the error of a write that waited busyTimeout for the lock.
func (d *db) busy(holder string) error {
	return fmt.Errorf("%w: %s held the write lock of %s for %v", memtool.ErrBusy, holder, d.path, d.busyTimeout)
}

// Classify keeps cancellation recognisable, and turns SQLite's busy, full
// and read-only codes into memtool's errors.
func (d *db) Classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return d.classify(err)
}

// classify wraps err with the memtool error its SQLite code stands for.
// SQLite reports a write that found no space (ENOSPC) as SQLITE_FULL. On a
// read-only file, or in a directory that takes no new files,
// SQLITE_CANTOPEN is SQLite unable to create the WAL's files beside it,
// so it is read-only too.
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
		if d.readOnly || dirReadOnly(d.path) {
			return fmt.Errorf("%w (SQLite cannot read a WAL database file on a read-only file system or in a read-only directory unless its -wal and -shm files exist: %v)", memtool.ErrReadOnly, err)
		}
	}
	return err
}

// dirReadOnly reports whether the directory of path refuses new files
// (its permissions, an immutable directory, a read-only file system).
func dirReadOnly(path string) bool {
	err := unix.Access(filepath.Dir(path), unix.W_OK)
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS)
}

// isCode reports whether err is SQLite's primary result code code.
func isCode(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == code
}

// querier runs the queries of a read on the read pool, or those of a
// write in its transaction, each through its prepared statement where
// stmts has one.
type querier struct {
	stmts *stmts
	tx    *sql.Tx // the write's transaction; nil for a read
}

// runner runs one query with its arguments: its prepared statement, or
// its text (text).
type runner interface {
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
	QueryContext(ctx context.Context, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
}

// runner returns what runs query: its statement in the write's
// transaction or on the read pool, or, where it has none, its text there.
func (q querier) runner(ctx context.Context, query string) runner {
	var on textRunner
	if q.tx == nil {
		if st := q.stmts.read(ctx, query); st != nil {
			return st
		}
		on = q.stmts.pool
	} else {
		if st, _ := q.stmts.get(query); st != nil {
			return q.tx.StmtContext(ctx, st)
		}
		q.stmts.missed(query)
		on = q.tx
	}
	return text{on, query}
}

// textRunner runs queries from their text: a transaction or a pool.
type textRunner interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// text runs a query from its text, without a statement.
type text struct {
	on    textRunner
	query string
}

func (t text) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return t.on.QueryRowContext(ctx, t.query, args...)
}

func (t text) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return t.on.QueryContext(ctx, t.query, args...)
}

func (t text) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return t.on.ExecContext(ctx, t.query, args...)
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqltree.Row {
	return q.runner(ctx, query).QueryRowContext(ctx, args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqltree.Rows, error) {
	rows, err := q.runner(ctx, query).QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q querier) Exec(ctx context.Context, query string, args ...any) error {
	_, err := q.runner(ctx, query).ExecContext(ctx, args...)
	return err
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
