// Package durable writes the small files memtool keeps beside its stores
// (key files, the key records of a directory store) so that a crash or a
// power loss leaves the old content or the new, never a torn or lost file:
// the file is fsynced before it is named, and its directory after.
//
// The directory store does not use it: it writes through os.Root and
// shares directory fsyncs among concurrent writers (filestore/doc.go).
package durable

import (
	"os"
	"path/filepath"
)

// SyncDir fsyncs the directory dir, so that a name made, replaced or
// removed in it survives a power loss.
func SyncDir(dir string) error { return syncDir(dir) }

// syncDir is SyncDir; a test counts its calls.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// MkdirAll makes dir and any missing parents, as os.MkdirAll does, and
// fsyncs the parent of each directory it made, from the top down, so that
// what it made survives a power loss once it returns. An existing dir
// costs one Stat. If an fsync fails, MkdirAll removes the directories it
// made (those still empty) before it returns the error: one left there
// would be taken, by the next call, for one that is durable.
func MkdirAll(dir string, perm os.FileMode) error {
	var missing []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Stat(d); err == nil || !os.IsNotExist(err) {
			break // there, or os.MkdirAll says what is wrong
		}
		missing = append(missing, d)
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(missing[i])); err != nil {
			for _, d := range missing { // from the bottom up
				os.Remove(d)
			}
			return err
		}
	}
	return nil
}

// WriteNew creates name with mode perm and data, fsyncs it and its
// directory, and returns only then. It never replaces a file: it fails
// with an error matching fs.ErrExist if name exists. A write that fails,
// up to the fsync of the directory, removes what it made: a file left
// there after that fsync failed, which a crash may take away, would be
// found by the next WriteNew (fs.ErrExist) and used as if durable.
func WriteNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	err = writeSynced(f, data)
	if err == nil {
		err = SyncDir(filepath.Dir(name))
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// Replace puts data in name atomically: a new file (mode 0600) beside it
// is written and fsynced, renamed over name, and the directory fsynced.
// Readers see the old content or the new. An error from the directory's
// fsync comes after the rename: the new content is in place, but a crash
// may still take it back. It does not lock: callers that may replace the
// same file at once must take turns themselves.
func Replace(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if err := writeSynced(f, data); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(name))
}

// writeSynced writes data to f, fsyncs and closes it; f is closed
// whatever happens.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
