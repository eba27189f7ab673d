package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	// 2: the search index, a trigram index (pg_trgm, GIN) of every file's
	// text, written with encode's escape format (which never fails, as
	// converting invalid UTF-8 to text would). The server keeps it in
	// the transaction of every write. Where pg_trgm cannot be installed
	// the migration makes no index, and says so in the server's log; a
	// search then reads every file of the memory on the server.
	`DO $$
	DECLARE
		ext text;
	BEGIN
		BEGIN
			CREATE EXTENSION IF NOT EXISTS pg_trgm;
		EXCEPTION WHEN OTHERS THEN
			RAISE WARNING 'memtool: no search index: the extension pg_trgm cannot be installed (%)', SQLERRM;
		END;
		SELECT extnamespace::regnamespace::text INTO ext FROM pg_extension WHERE extname = 'pg_trgm';
		IF ext IS NOT NULL THEN
			EXECUTE format('CREATE INDEX memtool_entries_trgm ON memtool_entries USING gin (encode(data, %L) %s.gin_trgm_ops) WHERE NOT dir', 'escape', ext);
		END IF;
	END $$;`,
}

// migrationLock is the advisory lock key under which migrations run.
const migrationLock = 0x6d656d746f6f6c // "memtool"

// migrate brings the schema to the latest version. A schema already there
// costs one read; otherwise the migrations run in one transaction under an
// advisory lock, so that memtool processes starting at once migrate once.
// Without create, a schema without memtool's tables is ErrNoTables.
func (d *db) migrate(ctx context.Context, create bool) error {
	return d.run(ctx, func(conn *pgx.Conn) error {
		version, err := schemaVersion(ctx, conn)
		var pgErr *pgconn.PgError
		noTables := errors.As(err, &pgErr) && pgErr.Code == codeUndefinedTable
		switch {
		case err == nil && version == len(migrations):
			return nil
		case noTables && !create:
			// memtool_keys alone is a store whose keys memtool keys add
			// made before its first use: memtool's, whose tables are
			// made below. No schema to create in is what the user has
			// to fix.
			var schema, keys *string
			if err := conn.QueryRow(ctx, `SELECT current_schema(), to_regclass('memtool_keys')::text`).Scan(&schema, &keys); err != nil {
				return err
			}
			switch {
			case schema == nil:
				return fmt.Errorf("no schema of the search_path exists: create it, or fix search_path in the URL; %w", ErrNoTables)
			case keys == nil:
				return ErrNoTables
			}
		case err != nil && !noTables:
			return err
		}
		return d.commit(ctx, conn, func(tx pgx.Tx) error {
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
func schemaVersion(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (int, error) {
	var version int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM memtool_schema_version`).Scan(&version); err != nil {
		return 0, err
	}
	if version > len(migrations) {
		return 0, fmt.Errorf("the database's schema is version %d, newer than this memtool knows (%d)", version, len(migrations))
	}
	return version, nil
}
