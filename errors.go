package memtool

import (
	"errors"
	"fmt"
	"io/fs"
)

// The errors a Store returns, checked with errors.Is. A store wraps them with
// the operation and name (as fs.PathError does); it never returns (nil, nil)
// for something missing.
var (
	// ErrNotExist: nothing is at the name, or a parent of it is not a directory.
	ErrNotExist = fs.ErrNotExist
	// ErrExist: something is already at the name.
	ErrExist = fs.ErrExist
	// ErrNotDir: a directory was needed (as a parent, or for ReadDir) and a file is there.
	ErrNotDir = errors.New("not a directory")
	// ErrIsDir: a regular file was needed and a directory is there.
	ErrIsDir = errors.New("is a directory")
	// ErrIrregular: the entry is neither a regular file nor a directory
	// (a FIFO, a socket, a device, a file with several hard links).
	ErrIrregular = errors.New("not a regular file or directory")
	// ErrEscapes: the name resolves through a symbolic link that leaves the
	// store, loops, or cannot be followed.
	ErrEscapes = errors.New("path escapes the store through a symbolic link")
	// ErrTooLarge: the file is larger than the read limit the caller gave.
	ErrTooLarge = errors.New("file too large")
	// ErrNotEmpty: Remove was asked to remove a directory that has entries.
	ErrNotEmpty = errors.New("directory not empty")

	// ErrNoSpace: the storage is full (ENOSPC, a disk quota, a database or
	// bucket out of space). Nothing changed; Memory tells the model so.
	ErrNoSpace = errors.New("no space left in the store")
	// ErrReadOnly: the storage takes no writes (a read-only file system or
	// database). Nothing changed; reads still work where the store can serve them.
	ErrReadOnly = errors.New("the store is read-only")
	// ErrBusy: the store's lock could not be had within its busy timeout
	// (another process holds it). Nothing changed; the caller may retry.
	ErrBusy = errors.New("the store is busy")
	// ErrOutcomeUnknown: the store's answer to a change was lost (a remote
	// store's connection ended, or its timeout struck, after the request
	// was sent), so the change may or may not have been made. It is the one
	// error after which a store may have changed something; Memory tells
	// the model to look before trying again, and never that nothing
	// changed.
	ErrOutcomeUnknown = errors.New("the store's answer was lost: the change may or may not have been made")
)

// The error types whose message is the text the model reads (without the
// "Error: " prefix). Memory passes them on verbatim; any other error from a
// store reaches the model only as an internal error.

// A Refusal is a failure whose text is meant for the model: Memory answers
// "Error: " + its text, verbatim. Memory's own checks return one, and so may
// a Store or a policy that wraps one (a quota, a secret filter) when it
// refuses an operation for a reason the model should read. Any other error
// from a store is reported to the model only as an internal error.
type Refusal string

func (r Refusal) Error() string { return string(r) }

func refusef(format string, args ...any) error { return Refusal(fmt.Sprintf(format, args...)) }

// A PathError is a path the gate refused. Its message is the text the model
// receives (without the "Error: " prefix).
type PathError struct {
	Path   string // the caller's path, exactly as sent
	Reason string
}

func (e *PathError) Error() string { return e.Reason }

// An InputError is tool input that ParseCommand refused. Its message is the
// text the model receives (without the "Error: " prefix).
type InputError struct {
	Reason string
}

func (e *InputError) Error() string { return e.Reason }

// panicked is a panic while running a command, recovered: its value and
// the stack where it happened, for the log.
type panicked struct {
	value any
	stack []byte
}

func (p *panicked) Error() string { return fmt.Sprintf("panic: %v\n%s", p.value, p.stack) }
