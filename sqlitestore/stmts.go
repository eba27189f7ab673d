package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// stmts keeps one prepared statement for each query that a pool of
// connections runs, so that each connection parses and plans a query once
// instead of at every call. Parsing and planning were a quarter of the CPU
// time of a command (a profile of BenchmarkMixedCommands): the driver
// compiles SQLite from C to Go, and a query's text is parsed again for
// every ExecContext or QueryContext that is not given a statement.
//
// The tree's queries are a fixed set of a few dozen texts (the search
// adds a few more shapes, never the terms: they are arguments), so the
// cache never evicts; past maxStmts queries, the others run unprepared,
// as every query did before.
//
// A statement of the read pool is prepared when a read first runs it:
// database/sql prepares it on each connection that runs it, once. The
// write pool has one connection, which the write that runs a query
// holds: preparing there would wait for that connection for good. So a
// write runs a query it has no statement for unprepared, and notes it;
// the next write prepares what was noted, before it takes the connection,
// and runs the statement in its transaction (sql.Tx.StmtContext, which
// uses what the connection has prepared). A one-shot command pays no
// preparation it would not use, but on a new file that of the tenancy
// claim its first change makes in a write of its own
// (TestWritesPrepareWhatTheWritesBeforeThemRan).
type stmts struct {
	pool *sql.DB
	mu   sync.Mutex
	// m holds the statement of each query; nil for a query that failed
	// to prepare, which runs unprepared from then on (and fails, if it
	// must, as it did before).
	m       map[string]*sql.Stmt
	pending []string // queries of writes, to prepare by the next write
}

// maxStmts is the most statements a pool keeps.
const maxStmts = 64

func newStmts(pool *sql.DB) *stmts {
	return &stmts{pool: pool, m: map[string]*sql.Stmt{}}
}

// get returns the statement of query, and whether the cache knows query
// (a known query may have no statement: it failed to prepare).
func (s *stmts) get(query string) (*sql.Stmt, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[query]
	return st, ok
}

// read returns the statement of query, preparing it first if the cache
// has room. It returns nil where query is to run unprepared.
func (s *stmts) read(ctx context.Context, query string) *sql.Stmt {
	if st, ok := s.get(query); ok {
		return st
	}
	s.prepare(ctx, query)
	st, _ := s.get(query)
	return st
}

// missed notes query, which a write ran without a statement, for the
// next write to prepare.
func (s *stmts) missed(query string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[query]; !ok && len(s.m)+len(s.pending) < maxStmts && !slices.Contains(s.pending, query) {
		s.pending = append(s.pending, query)
	}
}

// preparePending prepares the queries that earlier writes noted, waiting
// for the pool's connection (which the caller must not hold) no longer
// than until deadline: a write's own wait. A query that could not be
// prepared for now (ctx ended, the deadline passed, the file was busy)
// stays noted. With nothing noted, as after the first writes, it costs a
// look under the lock.
func (s *stmts) preparePending(ctx context.Context, deadline time.Time) {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for i, query := range pending {
		if !s.prepare(ctx, query) {
			s.mu.Lock()
			s.pending = append(s.pending, pending[i:]...)
			s.mu.Unlock()
			return
		}
	}
}

// prepare prepares query on the pool unless the cache knows it or is
// full. It does not hold the cache's lock while it waits for a
// connection. It reports false if it could not prepare query for now:
// ctx ended, or the file was busy (opening a connection can find it so).
func (s *stmts) prepare(ctx context.Context, query string) bool {
	s.mu.Lock()
	_, known := s.m[query]
	full := len(s.m) >= maxStmts
	s.mu.Unlock()
	if known || full {
		return true
	}
	st, err := s.pool.PrepareContext(ctx, query)
	if err != nil && (ctx.Err() != nil || isCode(err, sqlite3.SQLITE_BUSY)) {
		// Not the query's fault: try again later.
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[query]; ok || len(s.m) >= maxStmts {
		// Another goroutine prepared it meanwhile, or filled the cache.
		if st != nil {
			st.Close()
		}
		return true
	}
	s.m[query] = st // nil if it failed: it runs unprepared
	return true
}

// close closes the statements.
func (s *stmts) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for q, st := range s.m {
		if st != nil {
			err = errors.Join(err, st.Close())
		}
		delete(s.m, q)
	}
	return err
}
