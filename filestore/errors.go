// This file holds the mapping of OS errors to memtool's error classes.

package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/memtool/memtool"
)

// mapErr turns an OS error into memtool's error classes, keeping the detail.
func mapErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var class error
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		class = memtool.ErrNotExist
	case errors.Is(err, syscall.ENOTEMPTY): // before ErrExist, which ENOTEMPTY also matches
		class = memtool.ErrNotEmpty
	case errors.Is(err, fs.ErrExist):
		class = memtool.ErrExist
	case errors.Is(err, syscall.ELOOP), isEscape(err):
		class = memtool.ErrEscapes
	case errors.Is(err, syscall.EISDIR):
		class = memtool.ErrIsDir
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		class = memtool.ErrNoSpace
	case errors.Is(err, syscall.EROFS):
		class = memtool.ErrReadOnly
	case writes(op) && errors.Is(err, fs.ErrPermission):
		// A directory this process may not write, or an immutable entry:
		// read-only to this store.
		class = memtool.ErrReadOnly
	default:
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w (%v)", class, err)}
}

// writes reports whether op changes the store (a failed permission check
// there means the store, or that part of it, is read-only to us).
func writes(op string) bool {
	switch op {
	case "write", "update", "mkdir", "remove", "removeall", "rename":
		return true
	}
	return false
}

// isEscape recognises os.Root's refusal of a path or link that leaves it.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

func classErr(op, name string, class error) error {
	return &fs.PathError{Op: op, Path: name, Err: class}
}
