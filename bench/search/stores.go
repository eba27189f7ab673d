package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/sqlitestore"
)

// dropSQLiteIndex removes the search index from a database file: the
// store opened on it writes without it (and searches by a scan).
const dropSQLiteIndex = `DROP TRIGGER memtool_fts_insert; DROP TRIGGER memtool_fts_update; DROP TRIGGER memtool_fts_move;
DROP TRIGGER memtool_fts_delete; DROP TRIGGER memtool_fts_fold; DROP TRIGGER memtool_fts_unindex;
DROP TABLE memtool_fts; DROP TABLE memtool_fts_id; DROP TABLE memtool_fts_pending`

// loadSQLite makes the database file at path holding m, with the index
// or without it, and opens it. The files are loaded without the index;
// for the index, the store then builds it as it migrates a database made
// before search (schema version 1).
func loadSQLite(ctx context.Context, m memory, path string, index bool) *sqlitestore.Store {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	s, err := sqlitestore.Open(path, nil)
	check(err)
	_, err = s.Tenant(ctx, m.tenants[0])
	check(err)
	check(s.Close())
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	check(err)
	defer db.Close()
	_, err = db.Exec(dropSQLiteIndex)
	check(err)
	start := time.Now()
	tx, err := db.Begin()
	check(err)
	for _, t := range m.tenants {
		for d := range 100 {
			_, err = tx.Exec(`INSERT INTO memtool_entries VALUES (?, '', ?, 1, 0, NULL)`, t, fmt.Sprintf("d%03d", d))
			check(err)
		}
	}
	for _, r := range m.rows {
		_, err = tx.Exec(`INSERT INTO memtool_entries VALUES (?, ?, ?, 0, ?, ?)`, r.tenant, r.parent, r.name, len(r.text), []byte(r.text))
		check(err)
	}
	if index {
		_, err = tx.Exec(`UPDATE memtool_meta SET value = '1' WHERE key = 'schema_version'`)
		check(err)
	}
	check(tx.Commit())
	fmt.Printf("sqlite: loaded in %v\n", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	s, err = sqlitestore.Open(path, nil)
	check(err)
	if index {
		fmt.Printf("sqlite: index built (migration from schema version 1) in %v\n", time.Since(start).Round(time.Millisecond))
	}
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	check(err)
	return s
}

func benchSQLite(ctx context.Context, m memory) {
	s := loadSQLite(ctx, m, filepath.Join(*dir, "search.db"), true)
	defer s.Close()
	p := loadSQLite(ctx, m, filepath.Join(*dir, "plain.db"), false)
	defer p.Close()
	benchPair("sqlite", "sqlite (FTS5 trigram)", ctx, m, s, p)
}

// loadPostgres makes the schema named schema in the database of -pg,
// holding m, with the index or without it, and opens a store on it.
func loadPostgres(ctx context.Context, m memory, schema string, index bool) *pgstore.Store {
	conn, err := pgx.Connect(ctx, *pgURL)
	check(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema)
	check(err)
	u, err := url.Parse(*pgURL)
	check(err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := pgstore.Open(ctx, u.String(), nil)
	check(err)
	ok, err := s.HasSearchIndex(ctx)
	check(err)
	if !ok {
		check(fmt.Errorf("postgres: no search index (pg_trgm is missing)"))
	}
	_, err = s.Tenant(ctx, m.tenants[0])
	check(err)
	if !index {
		_, err = conn.Exec(ctx, `DROP INDEX `+schema+`.memtool_entries_trgm`)
		check(err)
	}
	start := time.Now()
	var copied [][]any
	for _, t := range m.tenants {
		for d := range 100 {
			copied = append(copied, []any{t, "", fmt.Sprintf("d%03d", d), true, int64(0), nil})
		}
	}
	for _, r := range m.rows {
		copied = append(copied, []any{r.tenant, r.parent, r.name, false, int64(len(r.text)), []byte(r.text)})
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{schema, "memtool_entries"}, []string{"tenant", "parent", "name", "dir", "size", "data"}, pgx.CopyFromRows(copied))
	check(err)
	_, err = conn.Exec(ctx, `VACUUM ANALYZE `+schema+`.memtool_entries`)
	check(err)
	fmt.Printf("postgres: loaded (index %v) in %v\n", index, time.Since(start).Round(time.Millisecond))
	return s
}

func benchPostgres(ctx context.Context, m memory) {
	s := loadPostgres(ctx, m, "memtool_bench_index", true)
	defer s.Close()
	p := loadPostgres(ctx, m, "memtool_bench_plain", false)
	defer p.Close()
	benchPair("postgres", "postgres (pg_trgm GIN)", ctx, m, s, p)
	conn, err := pgx.Connect(ctx, *pgURL)
	check(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `DROP SCHEMA memtool_bench_index CASCADE; DROP SCHEMA memtool_bench_plain CASCADE`)
	check(err)
}

// benchPair times the queries on indexed, and the writes on indexed and
// plain, in the tenant queried.
func benchPair(name, index string, ctx context.Context, m memory, indexed, plain memtool.Tenanted) {
	ts, err := indexed.Tenant(ctx, m.tenants[0])
	check(err)
	tp, err := plain.Tenant(ctx, m.tenants[0])
	check(err)
	timeQueries(index, ctx, ts, *queries)
	timeWrites(name, ctx, m, ts, tp)
}

func benchDir(ctx context.Context, m memory) {
	root := filepath.Join(*dir, "files")
	os.RemoveAll(root)
	start := time.Now()
	for _, r := range m.rows {
		if r.tenant != m.tenants[0] {
			continue // the directory store has no tenants: the tenant queried alone
		}
		p := filepath.Join(root, r.parent, r.name)
		check(os.MkdirAll(filepath.Dir(p), 0o700))
		check(os.WriteFile(p, []byte(r.text), 0o600))
	}
	fmt.Printf("dir: written (%d files) in %v\n", m.queried, time.Since(start).Round(time.Millisecond))
	s, err := filestore.Open(root, nil)
	check(err)
	defer s.Close()
	timeQueries("directory (scan)", ctx, memtool.Store(s), *scans)
}
