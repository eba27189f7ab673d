package memtool

import (
	"context"
	"io/fs"
)

// FileInfo describes one entry of a Store.
type FileInfo struct {
	// Name is the entry's base name; "" for the root.
	Name string
	// Size is the length of a regular file in bytes; 0 for a directory.
	Size int64
	// Type is 0 for a regular file, fs.ModeDir for a directory and
	// fs.ModeIrregular for anything else the store holds but memtool will not
	// open (FIFOs, devices, files with several hard links).
	Type fs.FileMode
}

// IsDir reports whether the entry is a directory.
func (fi FileInfo) IsDir() bool { return fi.Type == fs.ModeDir }

// IsRegular reports whether the entry is a regular file.
func (fi FileInfo) IsRegular() bool { return fi.Type == 0 }

// WriteMode says what WriteFile may find at the name.
type WriteMode int

const (
	// CreateOnly: the write fails with ErrExist if anything is at the name.
	// The check and the write are one atomic step.
	CreateOnly WriteMode = iota
	// Replace: the write replaces a regular file, or creates it if nothing is there.
	Replace
)

// Store keeps the bytes and directories behind /memories. Names are "" (the
// root) or clean slash-separated relative names as CleanPath returns them;
// a Store never sees anything else, and it never produces text for the model.
//
// Every method is safe for concurrent use, honours ctx cancellation, and is
// atomic and linearizable with respect to every other method on the same
// store, also from other processes sharing it: a reader sees a file's old or
// new content, never a mix, and two writers never lose each other's update.
// A method that returns nil has made its change durable. A method that
// returns an error has changed nothing, unless the error wraps
// ErrOutcomeUnknown (a store over a network whose answer was lost).
type Store interface {
	// Stat returns the entry at name. Missing (or a parent that is a file):
	// ErrNotExist. The root always exists.
	Stat(ctx context.Context, name string) (FileInfo, error)

	// ReadFile returns the whole content of the regular file at name.
	// Missing: ErrNotExist; a directory: ErrIsDir (only what Stat calls a
	// directory: a view lists it at once); anything else: ErrIrregular.
	// A file larger than limit bytes is not read: ErrTooLarge. The largest
	// limit, math.MaxInt64, reads a file of any size.
	ReadFile(ctx context.Context, name string, limit int64) ([]byte, error)

	// ReadDir returns the entries of the directory at name, in any order,
	// each with its Name, Size and Type. Missing: ErrNotExist; a file: ErrNotDir.
	// Entries the store keeps for itself are never returned.
	ReadDir(ctx context.Context, name string) ([]FileInfo, error)

	// WriteFile writes data as the whole content of the file at name, whose
	// parent directory must exist (else ErrNotExist, or ErrNotDir if it is a
	// file). With CreateOnly it fails with ErrExist if anything is at name;
	// with Replace it fails with ErrIsDir or ErrIrregular if something other
	// than a regular file is there.
	WriteFile(ctx context.Context, name string, data []byte, mode WriteMode) error

	// Update atomically replaces the content of the existing regular file at
	// name with fn(old). Errors for name are those of ReadFile. If fn returns
	// an error, nothing changes and Update returns that error unchanged; if
	// fn panics, nothing changes, the panic goes on, and the store stays
	// usable (no lock is left held). fn may be called more than once (a
	// store may retry after a conflict) and must not have side effects
	// beyond its result.
	Update(ctx context.Context, name string, limit int64, fn func(old []byte) ([]byte, error)) error

	// Mkdir creates the directory name, whose parent must exist (else
	// ErrNotExist, or ErrNotDir if it is a file). Anything at name: ErrExist.
	Mkdir(ctx context.Context, name string) error

	// Remove removes the file or empty directory at name. Missing:
	// ErrNotExist; a directory with entries: ErrNotEmpty. Callers never ask
	// to remove the root.
	Remove(ctx context.Context, name string) error
}

// Renamer is the optional capability of an atomic, no-replace rename.
//
// Rename moves the file or directory at oldname to newname, whose parent must
// exist. If anything is at newname it fails with ErrExist and changes
// nothing; the check and the move are one atomic step. Missing oldname:
// ErrNotExist. newname is never inside oldname (callers refuse that).
// An implementation that cannot rename at all (a Wrapper over a store
// without Renamer) returns an error wrapping errors.ErrUnsupported and
// changes nothing; callers then behave as if it had no Renamer.
//
// Without it, Move (and so Memory) copies and then removes; Memory holds
// its own lock against every other change through that Memory (views may
// see both trees). Across processes the fallback is neither atomic nor
// crash-safe: it removes only entries it created or copied, so another
// process's new entries survive, and a source file only while it holds
// what was copied, so another process's edit to it is carried to the
// copy (see Move), save one that lands just as the file is removed.
type Renamer interface {
	Rename(ctx context.Context, oldname, newname string) error
}

// RemoveAller is the optional capability of removing a directory and
// everything in it in one call. Missing: ErrNotExist. An implementation
// that cannot (a Wrapper over a store without RemoveAller) returns an error
// wrapping errors.ErrUnsupported and changes nothing. Without it, RemoveAll
// (and so Memory) walks the tree and removes entries one by one.
type RemoveAller interface {
	RemoveAll(ctx context.Context, name string) error
}
