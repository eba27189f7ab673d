package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/memtool/memtool"
)

func (s *Store) Remove(ctx context.Context, name string) error {
	return s.change(ctx, "remove", name, name == "", fs.ErrInvalid, func() error { return s.remove(ctx, "remove", name, false) })
}

// remove removes the file or the empty directory at name, or with all the
// directory and everything in it.
func (s *Store) remove(ctx context.Context, op, name string, all bool) error {
	k, _, err := s.existing(ctx, op, name)
	switch {
	case err != nil:
		return err
	case k == regular:
		return removed(op, name, s.bk.b.remove(ctx, s.fileKey(name)))
	}
	if all {
		keys, err := s.keysBelow(ctx, name, 0)
		if err != nil {
			return err
		}
		return s.deleteTree(ctx, keys)
	}
	keys, err := s.keysBelow(ctx, name, 2)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if key != s.markerKey(name) {
			return pathErr(op, name, memtool.ErrNotEmpty)
		}
	}
	return removed(op, name, s.bk.b.remove(ctx, s.markerKey(name)))
}

// removed is the answer of op on name whose delete of the entry's object
// answered err: ErrNotExist if another process removed (or moved) the
// entry after remove saw it, so that Memory does not take the internal
// errNotFound for a failure of the store.
func removed(op, name string, err error) error {
	if notFound(err) {
		return pathErr(op, name, memtool.ErrNotExist)
	}
	return err
}

// keysBelow returns the keys of every object under the directory name,
// its own marker included, up to max of them (0: all).
func (s *Store) keysBelow(ctx context.Context, name string, max int) ([]string, error) {
	return s.keysUnder(ctx, s.dirPrefix(name), max)
}

// keysUnder returns the keys that start with prefix, up to max of them
// (0: all).
func (s *Store) keysUnder(ctx context.Context, prefix string, max int) ([]string, error) {
	var keys []string
	err := s.bk.b.list(ctx, prefix, false, func(obj listed) bool {
		keys = append(keys, obj.key)
		return max == 0 || len(keys) < max
	})
	return keys, err
}

// RemoveAll removes the file or directory at name and everything in it:
// the files first, then the directory markers, deepest first, so that
// until the last step the directory still exists, and a crash leaves a
// smaller tree, never an entry without its directory.
func (s *Store) RemoveAll(ctx context.Context, name string) error {
	return s.change(ctx, "removeall", name, name == "", fs.ErrInvalid, func() error { return s.remove(ctx, "removeall", name, true) })
}

// deleteTree deletes keys: files first, then markers, deepest first. A
// failure after the first key wraps memtool.ErrOutcomeUnknown.
func (s *Store) deleteTree(ctx context.Context, keys []string) error {
	keys = slices.Clone(keys)
	sortForDelete(keys)
	for i, key := range keys {
		if err := s.bk.b.remove(ctx, key); err != nil && !notFound(err) {
			if i > 0 && !errors.Is(err, memtool.ErrOutcomeUnknown) {
				// Part of the tree is deleted: not "nothing changed".
				err = fmt.Errorf("%w (%d of %d objects gone: %v)", memtool.ErrOutcomeUnknown, i, len(keys), err)
			}
			return err
		}
	}
	return nil
}

// sortForDelete orders keys for deleting a tree: files first, then
// markers, deepest first, so that every step leaves each remaining entry
// in its directory.
func sortForDelete(keys []string) {
	isMarker := func(k string) bool { return strings.HasSuffix(k, "/"+dirMarker) }
	slices.SortStableFunc(keys, func(a, b string) int {
		ma, mb := isMarker(a), isMarker(b)
		switch {
		case ma != mb && ma:
			return 1
		case ma != mb:
			return -1
		case ma:
			return strings.Count(b, "/") - strings.Count(a, "/")
		}
		return 0
	})
}
