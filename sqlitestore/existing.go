// This file holds Options.Existing's check that a file is memtool's
// before Open writes to it.

package sqlitestore

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"os"
)

// existing checks that the file holds memtool's tables (the store's, or
// the keys' of package keys), reading it as a read-only file is read:
// without the pragmas that would turn it to WAL, which is a write, as
// creating the schema is.
//
// SQLite reads a database in WAL mode through its -wal and -shm files,
// creating them if they are missing, and a read-only connection leaves
// them behind: another program's closed WAL database got two files
// beside it from a read. A WAL database without its -wal file (closed by
// its last user, so all of it is in the file) is therefore read as
// immutable, which opens neither. If a writer made the -wal meanwhile
// (a store being created), the tables may be only in it, or its
// checkpoint may be writing the pages read: a file that seemed to have
// none, or could not be read so, is then read again, with SQLite's locks.
func (d *db) existing() error {
	fi, err := os.Stat(d.path)
	switch {
	case err != nil:
		return err
	case fi.Mode().IsRegular() && fi.Size() == 0:
		return noTablesError{empty: true}
	}
	immutable := walMode(d.path) && !exists(d.path+"-wal")
	err = d.hasTables(immutable)
	if immutable && err != nil && exists(d.path+"-wal") {
		err = d.hasTables(false)
	}
	return err
}

// hasTables reads whether the file holds memtool's tables.
func (d *db) hasTables(immutable bool) error {
	source := dsn(d.path, "deferred", d.busyTimeout, true)
	if immutable {
		source += "&immutable=1"
	}
	r, err := sql.Open("sqlite", source)
	if err != nil {
		return err
	}
	defer r.Close()
	// memtool_keys alone is a store whose keys memtool keys add made
	// before its first use: memtool's, whose tables Open then makes.
	var n int
	if err := r.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('memtool_meta', 'memtool_keys')`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return ErrNoTables
	}
	return nil
}

// walMode reports whether path is an SQLite database in WAL mode: its
// header's read and write versions (bytes 18 and 19) are 2. Anything
// else, unreadable included, is left to SQLite to read as it does.
func walMode(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return bytes.HasPrefix(h[:], []byte("SQLite format 3\x00")) && h[18] == 2 && h[19] == 2
}

// exists reports whether path exists; one that cannot be looked at is
// taken to exist, so that SQLite, with its locks, decides.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
