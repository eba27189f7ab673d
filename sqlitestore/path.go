// This file holds where the store's file is: the path SQLite opens,
// with its symbolic links resolved, and the check that it is still the
// file at the path Open was given.

package sqlitestore

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

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
		q.Add("_pragma", "synchronous(NORMAL)") // and the store fsyncs the WAL: walsync.go
	}
	q.Add("_pragma", "foreign_keys(OFF)")
	q.Set("_txlock", txlock)
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// resolve makes the file at path, every symbolic link of it resolved,
// the store's file, and path the one moved checks too.
func (d *db) resolve(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	d.path, d.wal.path, d.given = real, real, ""
	if real != filepath.Clean(path) {
		d.given = path
	}
	return nil
}

// moved fails if the file at path is no longer the one the store opened
// (deleted or replaced), or if the path Open was given (a symbolic link)
// no longer leads to it: SQLite would commit to the file it has open,
// which no later store at that path reads.
func (d *db) moved() error {
	for _, path := range []string{d.path, d.given} {
		if path == "" {
			continue
		}
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && d.file != nil && !os.SameFile(fi, d.file) {
			return fmt.Errorf("the database file %s was deleted or replaced while the store had it open (or a symbolic link on its path changed); open it again", path)
		}
	}
	return nil
}
