package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree"
)

// schema is the whole database. Every key starts with the tenant ("" in a
// single-tenant store); an entry is keyed by its parent directory's full
// name and its base name, so a directory's entries are one range of the
// primary key. searchIndex follows it.
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

// searchIndex is the index of search (version 3 of the schema; it
// replaces version 2's, which lost track of a replaced file's old text).
//
// memtool_fts is an FTS5 trigram index of the files' text, contentless
// (it keeps no copy of the text) and without positions (detail=none, see
// trigramQuery), under the id memtool_fts_id gives each file.
// memtool_fts_pending holds the ids of the files whose text the FTS5
// index may not hold yet: a write adds its file there, which costs a row
// of a small table, and the write that brings the pending files to
// foldFiles or their text to foldBytes folds them all into the FTS5
// index in one step: one new segment for many files instead of one per
// write. (The fold drops their old text one file at a time, through
// memtool_fts_unindex: FTS5 finds a rowid it is given, but scans its
// whole index for a rowid IN a list. CROSS JOIN keeps SQLite from
// reading every entry to find the pending ones.) A search reads the
// files the FTS5 index names and every pending file, and checks all their
// lines, so what it finds is exact whether a file was folded yet or not.
// Merges of the FTS5 segments run in larger steps than FTS5's default
// (automerge 16, not 4).
//
// Triggers keep all of it current in the transaction of every write: a
// new file gets an id and is pending, a change of its text makes it
// pending (an unchanged text touches nothing), a move renames the id's
// key, a delete makes the id pending (the fold drops its text) and frees
// it. Directories, and files holding a NUL byte (which search skips), are
// not indexed. The statements of the triggers hold no conflict clause
// (such as OR IGNORE) that an outer INSERT OR REPLACE would turn into a
// replace.
const searchIndex = `
DROP TRIGGER IF EXISTS memtool_fts_insert;
DROP TRIGGER IF EXISTS memtool_fts_update;
DROP TRIGGER IF EXISTS memtool_fts_move;
DROP TRIGGER IF EXISTS memtool_fts_delete;
DROP TABLE IF EXISTS memtool_fts;
DROP TABLE IF EXISTS memtool_fts_id;
CREATE VIRTUAL TABLE memtool_fts USING fts5(body, content='', contentless_delete=1, detail='none', tokenize='trigram');
INSERT INTO memtool_fts (memtool_fts, rank) VALUES ('automerge', 16);
CREATE TABLE memtool_fts_id (
	id     INTEGER PRIMARY KEY,
	tenant TEXT NOT NULL,
	parent TEXT NOT NULL,
	name   TEXT NOT NULL,
	UNIQUE (tenant, parent, name)
);
CREATE TABLE memtool_fts_pending (
	id     INTEGER PRIMARY KEY,
	size   INTEGER NOT NULL,
	folded INTEGER NOT NULL DEFAULT 0
);
CREATE TRIGGER memtool_fts_unindex AFTER UPDATE OF folded ON memtool_fts_pending BEGIN
	DELETE FROM memtool_fts WHERE rowid = new.id;
END;
CREATE TRIGGER memtool_fts_fold AFTER INSERT ON memtool_fts_pending
WHEN (SELECT count(*) >= ` + foldFiles + ` OR sum(size) >= ` + foldBytes + ` FROM memtool_fts_pending) BEGIN
	UPDATE memtool_fts_pending SET folded = 1;
	INSERT INTO memtool_fts (rowid, body) SELECT i.id, CAST(e.data AS TEXT) FROM memtool_fts_pending p
		CROSS JOIN memtool_fts_id i ON i.id = p.id
		CROSS JOIN memtool_entries e ON e.tenant = i.tenant AND e.parent = i.parent AND e.name = i.name
		WHERE NOT e.dir AND instr(e.data, x'00') = 0;
	DELETE FROM memtool_fts_pending;
END;
CREATE TRIGGER memtool_fts_insert AFTER INSERT ON memtool_entries WHEN NOT new.dir BEGIN
	INSERT INTO memtool_fts_id (tenant, parent, name) SELECT new.tenant, new.parent, new.name
		WHERE NOT EXISTS (SELECT 1 FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name);
	DELETE FROM memtool_fts_pending WHERE id = (SELECT id FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name);
	INSERT INTO memtool_fts_pending (id, size) SELECT id, new.size FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name;
END;
CREATE TRIGGER memtool_fts_update AFTER UPDATE OF data ON memtool_entries WHEN NOT new.dir AND new.data IS NOT old.data BEGIN
	DELETE FROM memtool_fts_pending WHERE id = (SELECT id FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name);
	INSERT INTO memtool_fts_pending (id, size) SELECT id, new.size FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name;
END;
CREATE TRIGGER memtool_fts_move AFTER UPDATE OF tenant, parent, name ON memtool_entries WHEN NOT old.dir BEGIN
	UPDATE memtool_fts_id SET tenant = new.tenant, parent = new.parent, name = new.name WHERE tenant = old.tenant AND parent = old.parent AND name = old.name;
END;
CREATE TRIGGER memtool_fts_delete AFTER DELETE ON memtool_entries WHEN NOT old.dir BEGIN
	DELETE FROM memtool_fts_pending WHERE id = (SELECT id FROM memtool_fts_id WHERE tenant = old.tenant AND parent = old.parent AND name = old.name);
	INSERT INTO memtool_fts_pending (id, size) SELECT id, 0 FROM memtool_fts_id WHERE tenant = old.tenant AND parent = old.parent AND name = old.name;
	DELETE FROM memtool_fts_id WHERE tenant = old.tenant AND parent = old.parent AND name = old.name;
END;
INSERT INTO memtool_fts_id (tenant, parent, name) SELECT tenant, parent, name FROM memtool_entries WHERE NOT dir;
INSERT INTO memtool_fts (rowid, body) SELECT i.id, CAST(e.data AS TEXT) FROM memtool_fts_id i
	JOIN memtool_entries e ON e.tenant = i.tenant AND e.parent = i.parent AND e.name = i.name
	WHERE instr(e.data, x'00') = 0;
UPDATE memtool_meta SET value = '3' WHERE key = 'schema_version';
`

// A write folds the pending files into the FTS5 index when there are
// foldFiles of them, or foldBytes of their text: what every search reads
// besides the files the index names.
const (
	foldFiles = "64"
	foldBytes = "1048576"
)

// schemaVersion is the version of schema after its migrations. A later
// version adds its migrations to init and refuses files newer than it
// knows.
const schemaVersion = "3"

// dialect is SQLite's spelling of the tree's statements.
var dialect = sqltree.Dialect{
	True: "1",
	// An update of the row, not INSERT OR REPLACE: the triggers of the
	// search index see a replaced file's old text.
	Upsert: `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, 0, ?, ?)
			ON CONFLICT (tenant, parent, name) DO UPDATE SET size = excluded.size, data = excluded.data`,
	// The write transaction holds the file's lock: no row lock.
	LockRow: "",
	Length:  "length",
	// SQLite searches the primary key for each range, but not for their
	// OR.
	SplitBelow: true,
	NoRows:     sql.ErrNoRows,
	Index: &sqltree.Index{
		// The files the FTS5 index names, and every pending file. The
		// trigram index ignores case: it finds every file the terms are
		// in, in any case, and the caller checks the case.
		From: func(terms []string, fold bool) (string, []any) {
			// CROSS JOIN keeps SQLite to this order: the planner would
			// otherwise read every id of the tenant (TestPlans).
			const join = `
				CROSS JOIN memtool_fts_id i ON i.id = m.id
				CROSS JOIN memtool_entries e ON e.tenant = i.tenant AND e.parent = i.parent AND e.name = i.name`
			q := trigramQuery(terms)
			switch {
			case q == "" && slices.ContainsFunc(terms, func(t string) bool { return strings.ContainsRune(t, 0) }):
				// A term holds a NUL: the pending files alone (the
				// FTS5 index holds no file that could match).
				return `(SELECT id FROM memtool_fts_pending) m` + join, nil
			case q == "":
				// No trigram to look up: every file.
				return `memtool_entries e`, nil
			}
			return `(SELECT rowid AS id FROM memtool_fts WHERE memtool_fts MATCH ? UNION SELECT id FROM memtool_fts_pending) m` + join, []any{q}
		},
	},
}

// trigramQuery returns the FTS5 query for the files that hold every
// trigram of every one of terms (each of three or more characters): all
// the files that hold the terms, and maybe a few more. The index keeps no
// positions (detail=none: a third of the work of a write), so it cannot
// look up a term as a phrase. A trigram holding a NUL is left out: FTS5
// reads its query only up to a NUL, and the index holds no file with one
// (search skips them). So is a term's last character if it is not ASCII:
// in a file that is not valid UTF-8, the tokenizer reads such a character
// together with the stray continuation bytes that follow it as another
// one, where a scan reads it as it is (and them as U+FFFD). With none
// left the query is "".
func trigramQuery(terms []string) string {
	var q []string
	for _, t := range terms {
		r := []rune(t)
		if len(r) > 0 && r[len(r)-1] >= utf8.RuneSelf {
			r = r[:len(r)-1]
		}
		for i := 0; i+3 <= len(r); i++ {
			if slices.Contains(r[i:i+3], 0) {
				continue
			}
			tri := `"` + strings.ReplaceAll(string(r[i:i+3]), `"`, `""`) + `"`
			if !slices.Contains(q, tri) {
				q = append(q, tri)
			}
		}
	}
	return strings.Join(q, " AND ")
}

// Store is a memtool.Store in an SQLite database file: the methods of
// the sqltree.Tree it embeds (memtool.Store, Renamer, RemoveAller and
// TenantLister), Tenant and Close. Open returns the tenant-less store;
// Tenant returns the others, which share its database.
type Store struct {
	*sqltree.Tree
	db    *db
	owner bool // Close closes the database
}

var _ memtool.Tenanted = (*Store)(nil)

// Options configures a Store. nil, or a zero field, means the default.
type Options struct {
	// BusyTimeout bounds a write's whole wait for the database's write
	// lock, held by another write of the store, another connection or
	// another process: past it the method fails with an error wrapping
	// memtool.ErrBusy and changes nothing. Reads wait for it only in the
	// rare cases a writer shuts them out (see the package doc). Default:
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
	// Existing opens only a file that holds memtool's tables, and writes
	// nothing to one that does not: a missing file fails with an error
	// wrapping fs.ErrNotExist, and an empty file or another program's
	// database with ErrNoTables, each left as it was. It is how a read
	// opens a store (memtool view): a read creates no store. A file of
	// an older schema is still migrated, and one that holds only the
	// keys of package keys (memtool keys add, before the store's first
	// use) gets the store's tables, as by any Open.
	Existing bool

	fsync func(*os.File) error // how the store fsyncs (tests); nil: (*os.File).Sync
}

// ErrNoTables is Open's error, with Options.Existing, for a file without
// memtool's tables. It matches fs.ErrNotExist: the store does not exist.
var ErrNoTables error = noTablesError{}

// A noTablesError is ErrNoTables, or one that says the file is empty.
type noTablesError struct{ empty bool }

func (e noTablesError) Error() string {
	if e.empty {
		return "the file is empty, not a memtool database yet (nothing was written to it)"
	}
	return "the file holds no memtool database (nothing was written to it)"
}

func (noTablesError) Is(target error) bool { return target == fs.ErrNotExist || target == ErrNoTables }

// idleReadConns is the most read connections a store keeps open while
// no read needs them.
const idleReadConns = 16

// readIdleTime is how long a read connection stays open unused (a
// variable for a test).
var readIdleTime = time.Minute

// DefaultBusyTimeout is the BusyTimeout of a store opened without one.
const DefaultBusyTimeout = 5 * time.Second

// Open opens the store in the database file at path (absolute), creating
// the file and its tables if they are missing, with opts (nil means the
// defaults). A database file that exists but cannot be written (a
// read-only file, directory or file system) is opened read-only: reads
// work where SQLite can serve them, and every write fails with an error
// wrapping memtool.ErrReadOnly.
func Open(path string, opts *Options) (*Store, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("sqlitestore: %q is not an absolute path", path)
	}
	d := &db{path: path, busyTimeout: DefaultBusyTimeout, wal: &walSync{path: path, syncData: syncData, syncDir: (*os.File).Sync}, turn: make(chan struct{}, 1)}
	if opts != nil && opts.BusyTimeout > 0 {
		d.busyTimeout = opts.BusyTimeout
	}
	if opts != nil && opts.fsync != nil {
		d.wal.syncData, d.wal.syncDir = opts.fsync, opts.fsync
	}
	// SQLite opens the file with every symbolic link of its path
	// resolved, and keeps its WAL beside that file: so does the store,
	// which fsyncs the WAL (walsync.go). A missing file is resolved once
	// made.
	unresolved := d.resolve(path)
	if unresolved != nil && !errors.Is(unresolved, fs.ErrNotExist) {
		return nil, fmt.Errorf("sqlitestore: %w", unresolved)
	}
	if opts != nil && opts.Existing {
		if err := d.existing(); err != nil {
			return nil, fmt.Errorf("sqlitestore: open %s: %w", path, d.classify(err))
		}
	}
	// The memory is private: create the file 0600 (SQLite gives its WAL
	// and shared-memory files the same mode).
	f, err := os.OpenFile(d.path, os.O_RDWR|os.O_CREATE, 0o600)
	switch {
	case err == nil:
		d.file, err = f.Stat()
		f.Close()
		if err == nil && unresolved != nil {
			err = d.resolve(path)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlitestore: %w", err)
		}
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		fi, statErr := os.Stat(d.path)
		if statErr != nil {
			return nil, fmt.Errorf("sqlitestore: %w (%v)", memtool.ErrReadOnly, err)
		}
		d.file, d.readOnly = fi, true
	default:
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	d.r, err = d.open(dsn(d.path, "deferred", d.busyTimeout, d.readOnly))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	// Reads that run at once each hold a connection of their own. The
	// pool keeps up to idleReadConns of them open between reads, so that
	// a burst of readers (a server's clients) does not close connections
	// and open others, each open parsing the schema and preparing its
	// statements again: with database/sql's default of 2, opening
	// connections was 40 % of the CPU of BenchmarkConcurrentClients on a
	// disk. An idle one is closed after a minute.
	d.r.SetMaxIdleConns(idleReadConns)
	d.r.SetConnMaxIdleTime(readIdleTime)
	d.rs = newStmts(d.r)
	if !d.readOnly {
		// No busy timeout: a write waits for the lock in db.begin.
		d.w, err = d.open(dsn(d.path, "immediate", 0, false))
		if err != nil {
			d.r.Close()
			return nil, fmt.Errorf("sqlitestore: %w", err)
		}
		d.w.SetMaxOpenConns(1)
		d.ws = newStmts(d.w)
	}
	if err := d.init(); err != nil {
		d.close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, d.classify(err))
	}
	dl := dialect
	if d.noIndex {
		dl.Index = nil
	}
	return &Store{Tree: sqltree.New(d, dl, "sqlitestore", "sqlitestore "+path), db: d, owner: true}, nil
}

// init checks the schema, and creates or migrates it if the file has
// none or an older one. Only then does it take the write lock: a store
// opens while another process writes. A file that cannot be written and
// has no search index is opened without one (search scans). A file of a
// later version is refused and left as it is.
func (d *db) init() error {
	ctx := context.Background()
	version, err := d.version(ctx, d.r)
	if (err != nil || older(version)) && !d.readOnly {
		// The schema is created and migrated in a write transaction, so
		// that processes opening a file at once do it once.
		err = d.write(ctx, func(tx *sql.Tx) error {
			// Read again under the lock: another process may have made
			// or migrated the schema since, or a later memtool made it
			// (whose tables this one must not touch).
			v, err := d.version(ctx, tx)
			if err == nil && !older(v) {
				version = v
				return nil
			}
			if _, err := tx.Exec(schema); err != nil {
				return err
			}
			if v, err = d.version(ctx, tx); err == nil && older(v) {
				_, err = tx.Exec(searchIndex)
			}
			if err != nil {
				return err
			}
			version, err = d.version(ctx, tx)
			return err
		})
	}
	switch {
	case err != nil:
		return err
	case older(version) && d.readOnly:
		d.noIndex = true
	case version != schemaVersion:
		return fmt.Errorf("the file's schema is version %s; this memtool knows version %s", version, schemaVersion)
	}
	return nil
}

// older reports whether version is one this memtool migrates from: 1 and
// 2, without version 3's search index.
func older(version string) bool { return version == "1" || version == "2" }

// version reads the schema's version.
func (d *db) version(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM memtool_meta WHERE key = 'schema_version'`).Scan(&v)
	return v, err
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
	t, err := s.ForTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Store{Tree: t, db: s.db}, nil
}
