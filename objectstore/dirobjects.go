package objectstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// dirObjects is a bucket in a directory (file+blob:///abs/dir): the
// object KEY is the file DIR/KEY (escaped as escapeFileKey says), laid
// out as gocloud's directory driver, which earlier versions used, laid it
// out without its attribute files. A write goes to a temporary file in
// DIR/.memtool-tmp/ that is then renamed into place, or, for a create,
// linked there (link fails if the name is taken, also for another
// process). Nothing is fsynced: it is for tests and one process.
type dirObjects struct {
	dir string
}

// tmpDir is the directory of dirObjects' temporary files, outside every
// store's keys (which start with their prefix, then "f/", "tenants/" or
// ".memtool-").
const tmpDir = ".memtool-tmp"

// attrsExt ends the names of gocloud's attribute files: as gocloud's
// driver does, dirObjects refuses keys that end with it, so that a
// directory stays readable by earlier versions, which skip such files.
const attrsExt = ".attrs"

var errAttrsExt = errors.New("file+blob cannot store a name ending in " + attrsExt)

func openDirObjects(dir string) (*dirObjects, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return &dirObjects{dir: dir}, nil
}

// path returns the file of key.
func (d *dirObjects) path(key string) (string, error) {
	rel := escapeFileKey(key)
	if strings.HasSuffix(rel, attrsExt) {
		return "", errAttrsExt
	}
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("key %q escapes the bucket's directory", key)
	}
	return filepath.Join(d.dir, filepath.FromSlash(rel)), nil
}

// absent reports whether err says that a file is not there: it does not
// exist, or a directory on its path is a file.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func (d *dirObjects) size(ctx context.Context, key string) (int64, error) {
	p, err := d.path(key)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	switch {
	case absent(err):
		return 0, errNotFound
	case err != nil:
		return 0, err
	case !fi.Mode().IsRegular():
		return 0, errNotFound
	}
	return fi.Size(), nil
}

func (d *dirObjects) read(ctx context.Context, key string, limit int64) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if absent(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errNotFound
	case fi.Size() > limit:
		return nil, errTooLarge
	}
	return readLimited(f, fi.Size(), limit)
}

func (d *dirObjects) write(ctx context.Context, key string, data []byte, createOnly bool) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	tmp, err := d.temp(data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		// The directory of a removed directory's entries (removing an
		// object leaves its directories, and those of its
		// subdirectories): make way if it holds no file. One that does
		// stays, and the write fails.
		removeEmptyTree(p)
	}
	if !createOnly {
		return os.Rename(tmp, p)
	}
	err = os.Link(tmp, p)
	if errors.Is(err, fs.ErrExist) {
		return errExists
	}
	return err
}

// removeEmptyTree removes the directory p if it holds nothing but
// directories that hold nothing else, deepest first. A file anywhere in
// it keeps it, and the directories on the way to that file.
func removeEmptyTree(p string) {
	entries, err := os.ReadDir(p)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(p, e.Name()))
		}
	}
	os.Remove(p)
}

// temp writes data to a new temporary file and returns its path.
func (d *dirObjects) temp(data []byte) (string, error) {
	dir := filepath.Join(d.dir, tmpDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := filepath.Join(dir, rand.Text())
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func (d *dirObjects) remove(ctx context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if _, err := d.size(ctx, key); err != nil {
		return err
	}
	err = os.Remove(p)
	if absent(err) {
		return errNotFound
	}
	return err
}

// list walks the directory of prefix (up to its last "/"), so it costs
// the size of that subtree.
func (d *dirObjects) list(ctx context.Context, prefix string, delim bool, fn func(listed) bool) error {
	start := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	root := d.dir
	if start != "" {
		root = filepath.Join(d.dir, filepath.FromSlash(escapeFileKey(start)))
	}
	var found []listed
	lastDir := ""
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil && p == root && absent(err):
			return filepath.SkipAll
		case absent(err):
			return nil // gone meanwhile
		case err != nil:
			return err
		}
		rel, err := filepath.Rel(d.dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == tmpDir || strings.HasSuffix(rel, attrsExt) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		key := unescapeFileKey(rel)
		if e.IsDir() {
			// Below the prefix, or on the way to it; not under a common
			// prefix already found.
			k := key + "/"
			if !strings.HasPrefix(k, prefix) && !strings.HasPrefix(prefix, k) || lastDir != "" && strings.HasPrefix(k, lastDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !strings.HasPrefix(key, prefix) {
			return nil
		}
		if i := strings.IndexByte(key[len(prefix):], '/'); delim && i >= 0 {
			lastDir = key[:len(prefix)+i+1]
			found = append(found, listed{key: lastDir, dir: true})
			return nil
		}
		fi, err := e.Info()
		if absent(err) {
			return nil
		}
		if err != nil {
			return err
		}
		found = append(found, listed{key: key, size: fi.Size()})
		return nil
	})
	if err != nil {
		return err
	}
	return yieldSorted(found, fn)
}

func (d *dirObjects) close() error { return nil }
