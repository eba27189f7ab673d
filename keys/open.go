package keys

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/memtool/memtool/internal/durable"
	"github.com/memtool/memtool/storeurl"
	"modernc.org/sqlite"
)

// Open opens the keyring of the store at storeURL (a memtool --store
// URL): the table memtool_keys in a PostgreSQL or SQLite store's
// database, or the file DIR.keys beside a directory store DIR (a missing
// table or file holds no keys). A missing SQLite file, or a missing
// directory store, is an error, unless Options.Create (which makes a
// missing SQLite file 0600). Without Create, Open and the keyring's List
// and Revoke write nothing to a store that holds no keys (no table, no
// key or lock file; an SQLite file is left in its journal mode): a
// mistyped store, another program's database included, is left as it
// was; Add makes the table. Any other store keeps no keys: an error says
// so. Errors never show the URL's password.
func Open(ctx context.Context, storeURL string, opts *Options) (*Keyring, error) {
	create := opts != nil && opts.Create
	b, err := openBackend(ctx, storeURL, create)
	if err != nil {
		return nil, fmt.Errorf("keys: %s", storeurl.Redact(err.Error(), storeURL))
	}
	return newKeyring(b, opts), nil
}

func openBackend(ctx context.Context, raw string, create bool) (backend, error) {
	scheme, _, _ := strings.Cut(raw, ":")
	switch scheme {
	case "postgres", "postgresql":
		// Parsed as pgstore parses it, so that a store URL's pool_*
		// parameters are read as the pool's, not sent to the server
		// (which refuses to connect with them).
		cfg, err := pgxpool.ParseConfig(raw)
		if err != nil {
			return nil, err
		}
		db := stdlib.OpenDB(*cfg.ConnConfig)
		db.SetMaxOpenConns(int(cfg.MaxConns))
		return openSQL(ctx, db, true, create)
	case "sqlite":
		path, err := sqlitePath(raw, create)
		if err != nil {
			return nil, err
		}
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(5000)")
		if create {
			// A database that holds memtool's tables is in WAL mode
			// already (the mode is kept in the file): only a keyring that
			// may make the file sets it.
			q.Add("_pragma", "journal_mode(WAL)")
		}
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
		dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
		return openSQL(ctx, sql.OpenDB(dsnConnector{dsn}), false, create)
	}
	if dir, ok := storeurl.Dir(raw); ok {
		// The key file is beside the directory: its folder must exist.
		if create {
			if err := durable.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o700); err != nil {
				return nil, err
			}
		}
		f := newFileKeys(dir)
		if !create && missing(dir) && missing(f.path) {
			// A mistyped store is no empty keyring, as a missing
			// SQLite file is not.
			return nil, fmt.Errorf("store %s does not exist, nor its key file: %w", raw, fs.ErrNotExist)
		}
		return f, nil
	}
	return nil, errKeepsNone(raw)
}

func errKeepsNone(raw string) error {
	return fmt.Errorf("store %s (%s) keeps no API keys: keys live in a PostgreSQL or SQLite store's database, or beside a directory store (give the server's keys another store with --keys)", raw, storeurl.Kind(raw))
}

// Kept returns the error Open would return for a store that keeps no
// keys, or nil for one that may: a program checks it before it opens
// or creates anything, so that a wrong keys store changes nothing. It
// opens nothing. The error never shows the URL's password.
func Kept(storeURL string) error {
	switch scheme, _, _ := strings.Cut(storeURL, ":"); scheme {
	case "postgres", "postgresql", "sqlite":
		return nil
	}
	if _, ok := storeurl.Dir(storeURL); ok {
		return nil
	}
	return fmt.Errorf("keys: %s", storeurl.Redact(errKeepsNone(storeURL).Error(), storeURL))
}

// missing reports whether nothing is at path.
func missing(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// dsnConnector opens SQLite connections to one file.
type dsnConnector struct{ dsn string }

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) {
	return c.Driver().Open(c.dsn)
}

func (dsnConnector) Driver() driver.Driver { return &sqlite.Driver{} }

// openSQL opens the keys of a database: with create, it makes the table
// if it is missing; without, it only looks whether the table is there.
func openSQL(ctx context.Context, db *sql.DB, pg, create bool) (backend, error) {
	s := &sqlKeys{db: db, pg: pg}
	var err error
	if create {
		err = s.init(ctx)
	} else {
		_, err = s.hasTable(ctx)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// sqlitePath is the file of an sqlite:///abs/path URL (or sqlite://~/path).
func sqlitePath(raw string, create bool) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	p := u.Path
	if u.Host == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p)
	} else if u.Host != "" && u.Host != "localhost" {
		p = ""
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("store URL %q: an SQLite URL needs an absolute path, as in sqlite:///abs/path.db", raw)
	}
	if create {
		if err := durable.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		// Private, as sqlitestore creates it (SQLite would make it 0644,
		// and its WAL files take its mode): it holds the keys' hashes,
		// and the memory once the store opens it.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
		// The new file's name is durable before a key is added to it.
		return p, durable.SyncDir(filepath.Dir(p))
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("store %s: %w", raw, err)
	}
	return p, nil
}
