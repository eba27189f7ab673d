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
	"slices"
	"strings"
	"syscall"
	"time"

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

// searchIndex is the index of search (version 2 of the schema): the text
// of every file in an FTS5 trigram index that keeps no copy of it
// (contentless) and no positions (detail=none, see trigramQuery), merging
// its segments in larger steps than FTS5's default (automerge 16, not 4):
// a write costs less, a search reads a few more segments, under the id memtool_fts_id gives the file. Triggers
// keep both current in the transaction of every write: an insert (or
// INSERT OR REPLACE, whose replaced row fires no delete trigger) indexes
// the file again under its id, an update of the data too, a move renames
// the id's key, a delete drops both. Directories are not indexed.
const searchIndex = `
CREATE VIRTUAL TABLE memtool_fts USING fts5(body, content='', contentless_delete=1, detail='none', tokenize='trigram');
INSERT INTO memtool_fts (memtool_fts, rank) VALUES ('automerge', 16);
CREATE TABLE memtool_fts_id (
	id     INTEGER PRIMARY KEY,
	tenant TEXT NOT NULL,
	parent TEXT NOT NULL,
	name   TEXT NOT NULL,
	UNIQUE (tenant, parent, name)
);
CREATE TRIGGER memtool_fts_insert AFTER INSERT ON memtool_entries WHEN NOT new.dir BEGIN
	INSERT OR IGNORE INTO memtool_fts_id (tenant, parent, name) VALUES (new.tenant, new.parent, new.name);
	DELETE FROM memtool_fts WHERE rowid = (SELECT id FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name);
	INSERT INTO memtool_fts (rowid, body) SELECT id, CAST(new.data AS TEXT) FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name;
END;
CREATE TRIGGER memtool_fts_update AFTER UPDATE OF data ON memtool_entries WHEN NOT new.dir BEGIN
	DELETE FROM memtool_fts WHERE rowid = (SELECT id FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name);
	INSERT INTO memtool_fts (rowid, body) SELECT id, CAST(new.data AS TEXT) FROM memtool_fts_id WHERE tenant = new.tenant AND parent = new.parent AND name = new.name;
END;
CREATE TRIGGER memtool_fts_move AFTER UPDATE OF tenant, parent, name ON memtool_entries WHEN NOT old.dir BEGIN
	UPDATE memtool_fts_id SET tenant = new.tenant, parent = new.parent, name = new.name WHERE tenant = old.tenant AND parent = old.parent AND name = old.name;
END;
CREATE TRIGGER memtool_fts_delete AFTER DELETE ON memtool_entries WHEN NOT old.dir BEGIN
	DELETE FROM memtool_fts WHERE rowid = (SELECT id FROM memtool_fts_id WHERE tenant = old.tenant AND parent = old.parent AND name = old.name);
	DELETE FROM memtool_fts_id WHERE tenant = old.tenant AND parent = old.parent AND name = old.name;
END;
INSERT INTO memtool_fts_id (tenant, parent, name) SELECT tenant, parent, name FROM memtool_entries WHERE NOT dir;
INSERT INTO memtool_fts (rowid, body) SELECT i.id, CAST(e.data AS TEXT) FROM memtool_fts_id i
	JOIN memtool_entries e ON e.tenant = i.tenant AND e.parent = i.parent AND e.name = i.name;
UPDATE memtool_meta SET value = '2' WHERE key = 'schema_version';
`

// schemaVersion is the version of schema after its migrations. A later
// version adds its migrations to init and refuses files newer than it
// knows.
const schemaVersion = "2"

// dialect is SQLite's spelling of the tree's statements.
var dialect = sqltree.Dialect{
	True:   "1",
	Upsert: `INSERT OR REPLACE INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, 0, ?, ?)`,
	// The write transaction holds the file's lock: no row lock.
	LockRow: "",
	Length:  "length",
	// SQLite searches the primary key for each range, but not for their
	// OR.
	SplitBelow: true,
	NoRows:     sql.ErrNoRows,
	Index: &sqltree.Index{
		From: `memtool_fts JOIN memtool_fts_id i ON i.id = memtool_fts.rowid
			JOIN memtool_entries e ON e.tenant = i.tenant AND e.parent = i.parent AND e.name = i.name`,
		// The trigram index ignores case: it finds every file the terms
		// are in, in any case, and the caller checks the case.
		Holds: func(terms []string, fold bool) (string, []any) {
			return `memtool_fts MATCH ?`, []any{trigramQuery(terms)}
		},
	},
}

// trigramQuery returns the FTS5 query for the files that hold every
// trigram of every one of terms (each of three or more characters): all
// the files that hold the terms, and maybe a few more. The index keeps no
// positions (detail=none: a third of the work of a write), so it cannot
// look up a term as a phrase.
func trigramQuery(terms []string) string {
	var q []string
	for _, t := range terms {
		r := []rune(t)
		for i := 0; i+3 <= len(r); i++ {
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
// the file and its tables if they are missing, with opts (nil means the
// defaults). A database file that exists but cannot be written (a
// read-only file, directory or file system) is opened read-only: reads
// work where SQLite can serve them, and every write fails with an error
// wrapping memtool.ErrReadOnly.
func Open(path string, opts *Options) (*Store, error) {
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
		// No busy timeout: a write waits for the lock in db.begin.
		d.w, err = sql.Open("sqlite", dsn(path, "immediate", 0, false))
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
	dl := dialect
	if d.noIndex {
		dl.Index = nil
	}
	return &Store{Tree: sqltree.New(d, dl, "sqlitestore", "sqlitestore "+path), db: d, owner: true}, nil
}

// init checks the schema, and creates or migrates it if the file has
// none or an older one. Only then does it take the write lock: a store
// opens while another process writes. A file that cannot be written and
// has no search index is opened without one (search scans).
func (d *db) init() error {
	ctx := context.Background()
	version, err := d.version(ctx, d.r)
	if (err != nil || version != schemaVersion) && !d.readOnly {
		// The schema is created and migrated in a write transaction, so
		// that processes opening a file at once do it once.
		err = d.write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.Exec(schema); err != nil {
				return err
			}
			v, err := d.version(ctx, tx)
			if err == nil && v == "1" {
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
	case version == "1" && d.readOnly:
		d.noIndex = true
	case version != schemaVersion:
		return fmt.Errorf("the file's schema is version %s; this memtool knows version %s", version, schemaVersion)
	}
	return nil
}

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
