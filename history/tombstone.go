package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
)

// A tombstone is the content of a file that a delete without rename has
// saved and is about to remove. Its time lets a writer take over one left
// behind by a process that died between the two steps.
const (
	tombstonePrefix = "\x00memtool-history: deleted, about to be removed\x00"
	tombstoneLen    = len(tombstonePrefix) + 20
	// staleTombstone is how old a tombstone must be before a write may
	// take its place, by the writer's clock. A delete that stalls this
	// long between its two steps, or whose clock runs that far behind
	// the writer's, may then remove what the write put there: the write
	// keeps it as a version first (see replaceTombstone).
	staleTombstone = 10 * time.Minute
	// futureTombstone is how far ahead of the writer's clock a tombstone
	// must be dated to be stale too: no delete's clock runs a day ahead,
	// so its digits are damaged, and it would block the name until that
	// date. One dated less far ahead is a delete's whose clock runs fast,
	// and is waited for, as one from the last ten minutes.
	futureTombstone = 24 * time.Hour
)

var errTombstoneContent = memtool.Refusal("That content cannot be stored: it is the marker memtool's history uses for a file being deleted. Nothing was changed.")

func tombstone(t time.Time) []byte {
	return fmt.Appendf(nil, "%s%020d", tombstonePrefix, t.UnixNano())
}

func isTombstone(data []byte) bool {
	return len(data) == tombstoneLen && strings.HasPrefix(string(data), tombstonePrefix)
}

// isTombstoneAt reports whether the entry fi at name is a tombstone. Only
// a store without rename holds them; only a file of their size is read.
func (s *Store) isTombstoneAt(ctx context.Context, name string, fi memtool.FileInfo) bool {
	if s.renamer != nil || !fi.IsRegular() || fi.Size != int64(tombstoneLen) {
		return false
	}
	data, err := s.inner.ReadFile(ctx, name, int64(tombstoneLen))
	return err == nil && isTombstone(data)
}

// replaceTombstone writes data over the tombstone mark if it is stale,
// with an update conditional on the mark (errChanged if it is gone). A
// delete still in progress: ErrBusy.
//
// Whether the delete that made the mark is dead is never known: its
// process may be stalled, or its clock behind this one's, and it removes
// the file blindly (a store without rename can remove nothing
// conditionally), whatever is there by then. So data is first kept as a
// version of name ("delete", what may replace it), and the delete's
// removal loses nothing. If the delete is dead after all, that version
// repeats the file's content.
func (s *Store) replaceTombstone(ctx context.Context, name string, mark, data []byte) error {
	ns, _ := strconv.ParseInt(string(mark[len(tombstonePrefix):]), 10, 64)
	if age := s.opts.Now().Sub(time.Unix(0, ns)); age <= staleTombstone && age >= -futureTombstone {
		return &fs.PathError{Op: "write", Path: name, Err: fmt.Errorf("being deleted by another process: %w", memtool.ErrBusy)}
	}
	v, err := s.save(ctx, name, data, "delete")
	if err != nil {
		return err
	}
	err = s.inner.Update(ctx, name, 1<<40, ifUnchanged(mark, content(data)))
	if err != nil && !errors.Is(err, errChanged) && s.holds(ctx, name, data) {
		err = nil // the store made the change it answered an error for
	}
	if err != nil {
		s.failed(ctx, name, v, mark, err)
		return err
	}
	s.prune(ctx, name, v)
	return nil
}

// entomb saves the content of the file at name as a version and turns the
// file into a tombstone, in an update conditional on that content, and
// returns the version and the tombstone. ErrNotExist if the file is gone
// or already a tombstone.
func (s *Store) entomb(ctx context.Context, name string) (version string, old, mark []byte, err error) {
	for range maxAttempts {
		old, err := s.ReadFile(ctx, name, 1<<40)
		if err != nil {
			return "", nil, nil, err
		}
		mark := tombstone(s.opts.Now())
		v, err := s.save(ctx, name, old, "delete")
		if err != nil {
			return "", nil, nil, err
		}
		err = s.inner.Update(ctx, name, 1<<40, ifUnchanged(old, content(mark)))
		if err != nil && !errors.Is(err, errChanged) && s.holds(ctx, name, mark) {
			err = nil // the store made the change it answered an error for
		}
		if err == nil {
			return v, old, mark, nil
		}
		s.failed(ctx, name, v, old, err)
		if !errors.Is(err, errChanged) {
			return "", nil, nil, err
		}
	}
	return "", nil, nil, busy("remove", name)
}

// unentomb puts old back in place of the tombstone mark, after a delete
// failed, and drops its version.
func (s *Store) unentomb(ctx context.Context, name, version string, old, mark []byte) {
	ctx = context.WithoutCancel(ctx)
	if s.inner.Update(ctx, name, 1<<40, ifUnchanged(mark, content(old))) == nil {
		s.drop(ctx, version)
	}
}

func (s *Store) removeWithTombstone(ctx context.Context, name string) error {
	v, old, mark, err := s.entomb(ctx, name)
	if errors.Is(err, memtool.ErrIsDir) || errors.Is(err, memtool.ErrIrregular) {
		return s.inner.Remove(ctx, name) // no longer a file: nothing to keep
	}
	if err != nil {
		return err
	}
	// A write that took the tombstone for stale (this delete stalled, or
	// the writer's clock runs ahead) came after the delete: it stays. One
	// that lands between this look and the removal is removed, kept as a
	// version by its writer.
	if s.replaced(ctx, name, mark) {
		s.prune(ctx, name, v)
		return nil
	}
	// ErrNotExist: a directory delete removed the tombstone first.
	if err := ignoreNotExist(s.inner.Remove(ctx, name)); err != nil {
		s.unentomb(ctx, name, v, old, mark)
		return err
	}
	s.prune(ctx, name, v)
	return nil
}

// replaced reports whether the tombstone mark at name is known to be
// gone: something else, or nothing, is there. A read that fails otherwise
// tells nothing.
func (s *Store) replaced(ctx context.Context, name string, mark []byte) bool {
	cur, err := s.inner.ReadFile(context.WithoutCancel(ctx), name, int64(len(mark)))
	switch {
	case err == nil:
		return !bytes.Equal(cur, mark)
	case errors.Is(err, memtool.ErrNotExist), errors.Is(err, memtool.ErrTooLarge), errors.Is(err, memtool.ErrIsDir), errors.Is(err, memtool.ErrIrregular):
		return true
	}
	return false
}

// removeAllWithTombstones turns every file under name into a tombstone,
// keeping its content, and then removes the tree. A file that another
// process creates in the tree between the two steps is removed without
// being kept: without a rename there is no one step that takes the tree
// away.
func (s *Store) removeAllWithTombstones(ctx context.Context, name string) error {
	type entombed struct {
		file, version string
		old, mark     []byte
	}
	var done []entombed
	err := walkFiles(ctx, s.inner, name, func(file string, _ memtool.FileInfo) error {
		v, old, mark, err := s.entomb(ctx, file)
		if err == nil {
			done = append(done, entombed{file, v, old, mark})
		}
		return err
	})
	if err == nil {
		err = memtool.ForwardRemoveAll(ctx, s.inner, name)
	}
	if err != nil {
		for _, e := range done {
			s.unentomb(ctx, e.file, e.version, e.old, e.mark)
		}
		return err
	}
	for _, e := range done {
		s.prune(ctx, e.file, e.version)
	}
	return nil
}
