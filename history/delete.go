package history

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
)

// Deleting keeps the content that is there at the instant of the delete,
// even if another process edits the file up to that instant. With an
// atomic rename the delete is a move into the trash, so the move is the
// save; the files are then moved into their versions' places and only
// then numbered, after every change that took effect before the delete.
// Without a rename (the encrypting wrapper has none) a delete takes two
// steps: it saves the content and turns the file into a tombstone, in one
// update conditional on the content saved, and then removes the
// tombstone; meanwhile every wrapper treats the tombstone as gone.

// Remove keeps the file it removes; a directory holds no content.
func (s *Store) Remove(ctx context.Context, name string) error {
	if reserved(name) {
		return s.inner.Remove(ctx, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := s.inner.Stat(ctx, name)
	switch {
	case err != nil:
		return err
	case !fi.IsRegular():
		return s.inner.Remove(ctx, name)
	case s.renamer == nil:
		return s.removeWithTombstone(ctx, name)
	}
	return s.removeToTrash(ctx, name, true)
}

// removeAll keeps every file under name.
// RemoveAll removes name's tree, keeping its files as versions. It is
// there when inner has RemoveAll (ErrUnsupported otherwise).
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	if !memtool.Has[memtool.RemoveAller](s.inner) {
		return memtool.Unsupported("removeall", name)
	}
	if reserved(name) {
		return memtool.ForwardRemoveAll(ctx, s.inner, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.renamer == nil {
		return s.removeAllWithTombstones(ctx, name)
	}
	return s.removeToTrash(ctx, name, false)
}

// removeToTrash moves name into the trash in one step, and then its files
// into their versions' places. With fileOnly, a directory that took the
// file's place after the caller's Stat is put back and removed the way
// Remove removes a directory.
func (s *Store) removeToTrash(ctx context.Context, name string, fileOnly bool) error {
	s.sweep(ctx)
	slot, err := s.toTrash(ctx, name)
	if err != nil {
		return err
	}
	if fileOnly {
		// (A sweep by another process may get to such a directory first:
		// its files are then kept as versions, and it is gone.)
		tree := path.Join(slot, treeName)
		if fi, err := s.inner.Stat(ctx, tree); err == nil && !fi.IsRegular() {
			err := s.renamer.Rename(ctx, tree, name)
			s.report(s.emptyTrash(ctx, slot)) // if something took the name, keeps the tree's files
			if err != nil {
				return err
			}
			return s.inner.Remove(ctx, name)
		}
	}
	// The delete is done; what emptying fails to record stays in the
	// trash for the next sweep.
	s.report(s.emptyTrash(ctx, slot))
	return nil
}

// The trash holds one directory (a slot) per delete in progress, named
// by the time it was made and at random ("<unix nanoseconds>-<random>"),
// holding the path that was deleted (pathFile) and the tree itself.
//
// A slot without a tree is a delete about to move its tree in, or one
// that no delete will fill: its creation's answer was lost, or its
// removal failed once it was emptied. A sweep takes one older than
// staleSlot for the latter, and reclaims it by moving it out of the
// way (to reclaimedPrefix and a random name) in one rename: a delete
// that still moves its tree in then either finds its slot gone and starts
// over in a new one, or got there first, and the sweep keeps the tree's
// files. Nothing is lost either way; staleSlot only spares deletes the
// new start, also when clocks disagree.
const (
	trashDir        = DirName + "/trash"
	treeName        = "tree"
	staleSlot       = time.Hour
	reclaimedPrefix = "reclaimed-"
)

// toTrash moves the entry at name into a new directory of the trash, and
// returns that directory.
func (s *Store) toTrash(ctx context.Context, name string) (string, error) {
	if _, err := memtool.MkdirAll(ctx, s.inner, trashDir); err != nil {
		return "", err
	}
	for range maxAttempts {
		slot := path.Join(trashDir, fmt.Sprintf("%d-%s", s.opts.Now().UnixNano(), rand.Text()))
		err := s.inner.Mkdir(ctx, slot)
		if errors.Is(err, memtool.ErrExist) {
			continue
		}
		if err != nil {
			// It may have been made (an answer lost); the name is ours
			// alone. What this leaves, a sweep reclaims.
			s.inner.Remove(context.WithoutCancel(ctx), slot)
			return "", err
		}
		err = s.inner.WriteFile(ctx, path.Join(slot, pathFile), []byte(name), memtool.CreateOnly)
		if err == nil {
			err = s.renamer.Rename(ctx, name, path.Join(slot, treeName))
		}
		if err != nil {
			// A store may answer an error for a rename it made (an fsync
			// that failed after it, an answer the network lost): then the
			// tree is in the slot, and the delete took place. A slot whose
			// tree may be there keeps its path, for a sweep to keep the
			// tree's files. A rename that is not one step (S3 moves a
			// directory object by object) may also have moved part of
			// the tree and left the rest at name: the delete was made in
			// part, as the store's error says, not made. What moved is
			// kept as versions.
			wctx := context.WithoutCancel(ctx)
			switch _, serr := s.inner.Stat(wctx, path.Join(slot, treeName)); {
			case serr == nil:
				if fi, nerr := s.inner.Stat(wctx, name); nerr == nil {
					s.report(s.emptyTrash(wctx, slot))
					if fi.IsDir() {
						// The store's answer names the trash: say it
						// in the model's terms.
						return "", partDeleted(name)
					}
					return "", err
				}
				return slot, nil
			case errors.Is(serr, memtool.ErrNotExist):
				if _, derr := s.inner.Stat(wctx, slot); errors.Is(derr, memtool.ErrNotExist) {
					continue // a sweep took the slot for stale (its clock runs ahead)
				}
				s.inner.Remove(wctx, path.Join(slot, pathFile))
				s.inner.Remove(wctx, slot)
			}
			return "", err
		}
		return slot, nil
	}
	return "", busy("remove", name)
}

// partDeleted is the answer to a delete of the directory name whose
// rename into the trash moved some of its files and left others.
func partDeleted(name string) error {
	v := memtool.VirtualPath(name)
	return memtool.Refusal(fmt.Sprintf("The delete of %s was done only in part: the files still under it could not be removed (other processes kept changing them, or the storage failed); those removed are kept as versions. View %s before trying again", v, v))
}

// emptyTrash moves the files of a trash directory into their versions'
// places and removes what is left. Another process may be emptying the
// same directory: each file is moved by one of them.
func (s *Store) emptyTrash(ctx context.Context, slot string) error {
	ctx = context.WithoutCancel(ctx)
	data, err := s.inner.ReadFile(ctx, path.Join(slot, pathFile), 1<<20)
	if err != nil {
		return ignoreNotExist(err)
	}
	name, tree := string(data), path.Join(slot, treeName)
	err = walkFiles(ctx, s.inner, tree, func(file string, fi memtool.FileInfo) error {
		orig := name + strings.TrimPrefix(file, tree)
		entry, err := s.claim(ctx, orig, "delete")
		if err != nil {
			return err
		}
		if err := s.renamer.Rename(ctx, file, entry); err != nil {
			return err
		}
		s.report(s.count(ctx, fi.Size))
		s.prune(ctx, orig, entry)
		return nil
	})
	if err = ignoreNotExist(err); err != nil {
		return err
	}
	// The tree first: a slot that keeps its tree is emptied again by the
	// next sweep, one that keeps only its path is reclaimed when stale. A
	// removal answered with an error may have been made: then go on.
	if err := s.gone(ctx, tree, memtool.RemoveAll(ctx, s.inner, tree)); err != nil {
		return err
	}
	pathName := path.Join(slot, pathFile)
	if err := s.gone(ctx, pathName, s.inner.Remove(ctx, pathName)); err != nil {
		return err
	}
	return s.gone(ctx, slot, s.inner.Remove(ctx, slot))
}

// gone returns err, the answer to removing name, unless name is gone.
func (s *Store) gone(ctx context.Context, name string, err error) error {
	if err == nil || errors.Is(err, memtool.ErrNotExist) {
		return nil
	}
	if _, serr := s.inner.Stat(ctx, name); errors.Is(serr, memtool.ErrNotExist) {
		return nil
	}
	return err
}

// sweep finishes the deletes that other processes left in the
// trash (they died, or failed to record some files), and reclaims the
// slots without a tree that are stale (see staleSlot). Over a store
// without rename it does nothing: it finishes deletes by moves.
func (s *Store) sweep(ctx context.Context) {
	if s.renamer == nil {
		return
	}
	entries, err := s.inner.ReadDir(ctx, trashDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		slot := path.Join(trashDir, e.Name)
		switch _, err := s.inner.Stat(ctx, path.Join(slot, treeName)); {
		case err == nil:
			s.report(s.emptyTrash(ctx, slot))
		case !errors.Is(err, memtool.ErrNotExist):
			s.report(err)
		case strings.HasPrefix(e.Name, reclaimedPrefix):
			s.report(ignoreNotExist(memtool.RemoveAll(context.WithoutCancel(ctx), s.inner, slot)))
		case s.isStale(e.Name):
			s.report(s.reclaim(ctx, slot))
		}
	}
}

// Settle finishes the deletes left in the trash, as every change through
// s does first. A delete cut off after it moved a file out of the way and
// before it numbered the file's version (its process killed) leaves that
// version out of Versions and Read until then: call Settle before them.
// What it cannot finish (on a read-only store, say; all of it on a store
// without rename) stays for the next change, and its failures go to
// Options.OnError.
func (s *Store) Settle(ctx context.Context) { s.sweep(ctx) }

// isStale reports whether the slot named so was made more than
// staleSlot ago. A name without a time (from a memtool that named slots
// at random only) is never stale: its age is unknown.
func (s *Store) isStale(slot string) bool {
	i := strings.LastIndexByte(slot, '-')
	ns, err := strconv.ParseInt(slot[:max(i, 0)], 10, 64)
	return i > 0 && err == nil && s.opts.Now().Sub(time.Unix(0, ns)) > staleSlot
}

// reclaim moves the slot, which had no tree, out of the way and removes
// it, or empties it if a delete moved its tree in meanwhile.
func (s *Store) reclaim(ctx context.Context, slot string) error {
	ctx = context.WithoutCancel(ctx)
	dead := path.Join(trashDir, reclaimedPrefix+rand.Text())
	if err := s.renamer.Rename(ctx, slot, dead); err != nil {
		return ignoreNotExist(err) // ErrNotExist: another sweep took it
	}
	if _, err := s.inner.Stat(ctx, path.Join(dead, treeName)); err == nil {
		return s.emptyTrash(ctx, dead)
	}
	return ignoreNotExist(memtool.RemoveAll(ctx, s.inner, dead))
}

func ignoreNotExist(err error) error {
	if errors.Is(err, memtool.ErrNotExist) {
		return nil
	}
	return err
}

// walkFiles calls fn for every regular file at or under name, with
// memtool.Walk. A file below name removed meanwhile (fn's ErrNotExist) is
// skipped.
func walkFiles(ctx context.Context, s memtool.Store, name string, fn func(string, memtool.FileInfo) error) error {
	return memtool.Walk(ctx, s, name, func(file string, fi memtool.FileInfo) error {
		if !fi.IsRegular() {
			return nil
		}
		if err := fn(file, fi); file == name || !errors.Is(err, memtool.ErrNotExist) {
			return err
		}
		return nil
	})
}
