package memtool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// The tree helpers below work over any Store, using its optional
// capabilities when it has them, as fs.ReadFile does with ReadFileFS. They
// are Memory's own fallbacks; a policy or tool that needs a tree walked,
// made, removed, copied or moved uses them rather than a copy of its own.
//
// Walk and RemoveAll take entries that another goroutine or process
// removes while they run as gone, not as failures; Copy and Move fail on
// them and undo their copies. Walk, RemoveAll, Copy and Move fail with
// ErrNotExist if the name they start from is missing.

// Walk calls fn for name and then for everything below it, parents before
// their entries, entries in the order ReadDir returns them. fn receives
// each entry's name and FileInfo (from Stat for name, from ReadDir below
// it). A directory removed (or replaced by a file) before Walk reads it is
// walked as empty. If fn returns fs.SkipDir, Walk does not walk into that
// entry (for a directory) and goes on with the next. Any other error from
// fn stops the walk and is returned.
//
// On a store with symbolic links (a Resolver) Walk walks each directory
// once: a link to a directory is an entry like any other, but Walk does
// not walk into it when the directory it leads to lies in the tree walked
// (it is walked under its own name) or was walked already. So a link to
// an ancestor neither repeats the files below it nor makes the walk go
// round until the file system's link limit. A link out of the tree walked
// is walked into, as before.
func Walk(ctx context.Context, s Store, name string, fn func(name string, fi FileInfo) error) error {
	fi, err := s.Stat(ctx, name)
	if err != nil {
		return err
	}
	w := &treeWalk{s: s, fn: fn}
	if w.r = resolverOf(s); w.r != nil {
		w.root = w.r.ResolveName(ctx, name)
		w.walked = map[string]bool{w.root: true}
	}
	return w.walk(ctx, name, w.root, fi)
}

// A treeWalk is one Walk. Without a Resolver, r is nil and names are not
// resolved.
type treeWalk struct {
	s      Store
	fn     func(string, FileInfo) error
	r      Resolver
	root   string          // the tree walked, resolved
	walked map[string]bool // the directories walked, resolved
}

// walk calls fn for name, at real once resolved, and walks below it.
func (w *treeWalk) walk(ctx context.Context, name, real string, fi FileInfo) error {
	if err := w.fn(name, fi); err == fs.SkipDir {
		return nil
	} else if err != nil || !fi.IsDir() {
		return err
	}
	entries, err := w.s.ReadDir(ctx, name)
	if errors.Is(err, ErrNotExist) || errors.Is(err, ErrNotDir) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		sub, into := path.Join(name, e.Name), ""
		if w.r != nil && e.IsDir() {
			to := w.r.ResolveName(ctx, sub)
			link := to != path.Join(real, e.Name)
			if link && (to == w.root || isBelow(to, w.root)) || w.walked[to] {
				if err := w.fn(sub, e); err != nil && err != fs.SkipDir {
					return err
				}
				continue
			}
			into = to
			w.walked[into] = true
		}
		if err := w.walk(ctx, sub, into, e); err != nil {
			return err
		}
	}
	return nil
}

// resolverOf returns the Resolver that ResolveName would ask for s, or
// nil if there is none.
func resolverOf(s Store) Resolver {
	for s != nil {
		if r, ok := s.(Resolver); ok {
			return r
		}
		w, ok := s.(Wrapper)
		if !ok {
			return nil
		}
		s = w.Unwrap()
	}
	return nil
}

// MkdirAll creates the directory name and its missing parents, and returns
// the directories it created, parents first, so that a caller whose next
// step fails can remove them again. name "" or "." is the root: nothing is
// created. A file (or anything but a directory) in the way fails with
// ErrNotDir. A failure is an *fs.PathError naming the directory that could
// not be made, and leaves nothing behind: MkdirAll removes the directories
// it created, those still empty.
//
// It first asks whether name is a directory already, the usual case (a
// file created beside others), which costs one Stat however deep name is
// and makes nothing; only otherwise does it make each missing directory,
// top down.
func MkdirAll(ctx context.Context, s Store, name string) (created []string, err error) {
	if name == "." || name == "" {
		return nil, nil
	}
	if fi, err := s.Stat(ctx, name); err == nil && fi.IsDir() {
		return nil, nil
	}
	parts := strings.Split(name, "/")
	for i, tries := 0, 0; i < len(parts); i++ {
		d := strings.Join(parts[:i+1], "/")
		err := s.Mkdir(ctx, d)
		if err == nil {
			created = append(created, d)
			continue
		}
		if errors.Is(err, ErrExist) {
			fi, serr := s.Stat(ctx, d)
			switch {
			case serr == nil && fi.IsDir():
				continue
			case errors.Is(serr, ErrNotExist) && tries < 3:
				// It was there and is gone: removed or renamed away by a
				// concurrent command. Make it again.
				tries++
				i--
				continue
			case serr == nil:
				err = ErrNotDir
			default:
				err = serr
			}
		}
		removeCreated(ctx, s, created)
		return nil, &fs.PathError{Op: "mkdir", Path: d, Err: err}
	}
	return created, nil
}

// removeCreated removes directories that MkdirAll created for a step that
// then failed, deepest first, while they are still empty (a concurrent
// command may have put something there). It runs even if ctx is done.
func removeCreated(ctx context.Context, s Store, created []string) {
	ctx = context.WithoutCancel(ctx)
	for i := len(created) - 1; i >= 0; i-- {
		if err := s.Remove(ctx, created[i]); err != nil {
			return
		}
	}
}

// RemoveAll removes name and everything below it, with the store's
// RemoveAller if it has one (and does not answer ErrUnsupported, as a
// wrapper over a store without it does). Otherwise it removes entry by
// entry, deepest first: an entry removed meanwhile by someone else is
// skipped, and one created meanwhile in a directory it empties makes it
// fail with ErrNotEmpty, leaving that directory and what is in it. Missing
// name: ErrNotExist. A failure after an entry was removed wraps
// ErrOutcomeUnknown as well as the store's error: part of the tree is gone.
func RemoveAll(ctx context.Context, s Store, name string) error {
	if err := ForwardRemoveAll(ctx, s, name); !unsupported(err) {
		return err
	}
	removed := 0
	if err := removeTree(ctx, s, name, &removed); err != nil {
		if removed > 0 {
			return &partialError{"remove", name, err}
		}
		return err
	}
	return nil
}

// removeTree removes name and what is below it, counting the entries it
// removed.
func removeTree(ctx context.Context, s Store, name string, removed *int) error {
	fi, err := s.Stat(ctx, name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		entries, err := s.ReadDir(ctx, name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := removeTree(ctx, s, path.Join(name, e.Name), removed); err != nil && !errors.Is(err, ErrNotExist) {
				return err
			}
		}
	}
	if err := s.Remove(ctx, name); err != nil {
		return err
	}
	*removed++
	return nil
}

// A partialError is a tree helper's failure after it changed part of the
// store, which it could not undo: the change is neither made nor
// undone. It matches ErrOutcomeUnknown (Memory tells the model to look
// before it tries again) and the store's error.
type partialError struct {
	op, name string
	err      error
}

func (e *partialError) Error() string {
	return e.op + " " + VirtualPath(e.name) + ": done in part: " + e.err.Error()
}

func (e *partialError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.err} }

// Copy copies the file or directory src to dst, whose parent must exist
// and where nothing may be (else ErrExist). limit bounds each file read
// (ReadFile's limit). dst inside src fails with fs.ErrInvalid. Anything
// but regular files and directories fails with fs.ErrInvalid. If Copy
// fails, it removes the copies it made, and only those.
func Copy(ctx context.Context, s Store, src, dst string, limit int64) error {
	if isBelow(dst, src) {
		return &fs.PathError{Op: "copy", Path: dst, Err: fs.ErrInvalid}
	}
	var copies []copied
	err := copyTree(ctx, s, src, dst, limit, &copies)
	if err != nil && !removeCopies(ctx, s, src, dst, copies) {
		return &partialError{"copy", src, err}
	}
	return err
}

// Move moves the file or directory oldname to newname, whose parent must
// exist and where nothing may be (else ErrExist), with the store's Renamer
// if it has one (and does not answer ErrUnsupported). Otherwise it copies
// the tree entry by entry (limit bounds each file read) and then removes
// the entries it copied, and only those, deepest first: an entry that
// another process put into either tree meanwhile stays, with the
// directories that hold it. A source file is removed only while it still
// holds what was copied: another process's change to it made meanwhile
// is carried to its copy (or, if the copy was changed too, the source
// stays). If the copy fails, Move removes the copies it made and nothing
// else. The fallback is not atomic: others may see both trees or part of
// one, and a change that lands on a source file in the instant between
// that check and its removal is lost. A crash, or a store failure while
// removing, leaves the new tree and what remains of the old one.
// newname inside oldname fails with fs.ErrInvalid.
func Move(ctx context.Context, s Store, oldname, newname string, limit int64) error {
	if isBelow(newname, oldname) {
		return &fs.PathError{Op: "move", Path: newname, Err: fs.ErrInvalid}
	}
	if err := ForwardRename(ctx, s, oldname, newname); !unsupported(err) {
		return err
	}
	return moveTree(ctx, s, oldname, newname, limit)
}

// moveTree is Move's fallback: copy, then remove what was copied.
func moveTree(ctx context.Context, s Store, oldname, newname string, limit int64) error {
	var copies []copied // the source entries, parents first
	err := copyTree(ctx, s, oldname, newname, limit, &copies)
	if err != nil {
		if !removeCopies(ctx, s, oldname, newname, copies) {
			return &partialError{"move", oldname, err}
		}
		return err
	}
	ctx = context.WithoutCancel(ctx) // from here on, finish what was begun
	for i := len(copies) - 1; i >= 0; i-- {
		e := copies[i]
		if e.file {
			dst := newname + strings.TrimPrefix(e.name, oldname)
			if ok, err := settle(ctx, s, e.name, dst, e.sum, limit); err != nil {
				return &partialError{"move", oldname, err}
			} else if !ok {
				continue // changed meanwhile: it stays
			}
		}
		err := s.Remove(ctx, e.name)
		if err != nil && !errors.Is(err, ErrNotExist) && !errors.Is(err, ErrNotEmpty) {
			return &partialError{"move", oldname, err}
		}
	}
	return nil
}

// errChanged: the copy of a moved file was changed by someone else.
var errChanged = errors.New("changed meanwhile")

// settle reports whether the source file src, whose copy dst held the
// bytes of checksum sum when made, may now be removed: it still holds
// what its copy holds. If src was changed meanwhile, settle carries the
// change to dst, as long as dst still holds what was copied; otherwise
// src stays (settle answers false), and so does a src that is no longer
// a readable file.
func settle(ctx context.Context, s Store, src, dst string, sum [sha256.Size]byte, limit int64) (bool, error) {
	for range 3 {
		data, err := s.ReadFile(ctx, src, limit)
		switch {
		case errors.Is(err, ErrNotExist), errors.Is(err, ErrTooLarge), errors.Is(err, ErrIsDir), errors.Is(err, ErrIrregular):
			return false, nil
		case err != nil:
			return false, err
		}
		now := sha256.Sum256(data)
		if now == sum {
			return true, nil
		}
		err = s.Update(ctx, dst, limit, func(old []byte) ([]byte, error) {
			if sha256.Sum256(old) != sum && !bytes.Equal(old, data) {
				return nil, errChanged
			}
			return data, nil
		})
		if err != nil {
			return false, nil // the copy changed or went: both stay
		}
		sum = now
	}
	return false, nil // still changing: it stays
}

// isBelow reports whether name is inside the directory dir.
func isBelow(name, dir string) bool {
	return name != dir && (dir == "" || strings.HasPrefix(name, dir+"/"))
}

// removeCopies removes the copies under dst of the source entries copied,
// deepest first, even if ctx is done, and reports whether nothing of the
// copy is left (a copied directory another writer put something in may
// be).
func removeCopies(ctx context.Context, s Store, src, dst string, copies []copied) bool {
	ctx = context.WithoutCancel(ctx)
	clean := true
	for i := len(copies) - 1; i >= 0; i-- {
		// A copied directory another writer has put something in stays,
		// now theirs too: it holds nothing of the copy (the copy's own
		// entries, removed first, would each have failed).
		err := s.Remove(ctx, dst+strings.TrimPrefix(copies[i].name, src))
		if err != nil && !errors.Is(err, ErrNotExist) && !(!copies[i].file && errors.Is(err, ErrNotEmpty)) {
			clean = false
		}
	}
	return clean
}

// copied is a source entry whose copy copyTree created; for a file, with
// the checksum of the bytes copied.
type copied struct {
	name string
	file bool
	sum  [sha256.Size]byte
}

// copyTree copies the file or directory src to dst, which must not exist,
// and appends to copies each source entry whose copy it created.
func copyTree(ctx context.Context, s Store, src, dst string, limit int64, copies *[]copied) error {
	fi, err := s.Stat(ctx, src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := s.Mkdir(ctx, dst); err != nil {
			return err
		}
		*copies = append(*copies, copied{name: src})
		entries, err := s.ReadDir(ctx, src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(ctx, s, path.Join(src, e.Name), path.Join(dst, e.Name), limit, copies); err != nil {
				return err
			}
		}
		return nil
	case fi.IsRegular():
		data, err := s.ReadFile(ctx, src, limit)
		if err != nil {
			return err
		}
		if err := s.WriteFile(ctx, dst, data, CreateOnly); err != nil {
			return err
		}
		*copies = append(*copies, copied{name: src, file: true, sum: sha256.Sum256(data)})
		return nil
	}
	return fmt.Errorf("copy %s: %w", src, fs.ErrInvalid)
}
