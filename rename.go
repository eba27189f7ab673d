package memtool

import (
	"context"
	"errors"
	"path"
	"strings"
)

func (m *Memory) rename(ctx context.Context, c *Rename, alone bool) (Result, error) {
	oldName, oldDir, err := CleanPath(c.OldPath)
	if err != nil {
		return Result{}, err
	}
	newName, newDir, err := CleanPath(c.NewPath)
	if err != nil {
		return Result{}, err
	}
	if oldName == "" {
		return Result{}, refusef("Cannot rename the %s directory itself", Root)
	}
	if newName == "" {
		return Result{}, refusef("The destination %s already exists", c.NewPath)
	}
	// The destination is checked before the source, as the TS SDK does:
	// a missing source onto an existing name reads "already exists".
	if _, err := m.store.Stat(ctx, newName); err == nil {
		return Result{}, refusef("The destination %s already exists", c.NewPath)
	} else if !errors.Is(err, ErrNotExist) {
		return Result{}, err
	}
	fi, err := m.stat(ctx, oldName, missingPathShort, c.OldPath)
	switch {
	case err != nil:
		return Result{}, err
	case (oldDir || newDir) && !fi.IsDir():
		return Result{}, refusef("Cannot rename %s to %s: a path ending in '/' names a directory, and %s is a file", c.OldPath, c.NewPath, c.OldPath)
	}
	if fi.IsDir() && strings.HasPrefix(newName, oldName+"/") {
		return Result{}, refusef("Cannot move the directory %s into itself (%s). Nothing was changed.", c.OldPath, c.NewPath)
	}
	if fi.IsDir() {
		if err := m.movedPathsFit(ctx, c, oldName, newName); err != nil {
			return Result{}, err
		}
	}
	// A new parent removed by a concurrent command between mkdirAll and
	// the move is made again, as create does; a few rounds settle it.
	for attempt := 0; ; attempt++ {
		created, err := m.mkdirAll(ctx, c.NewPath, path.Dir(newName))
		if err != nil {
			return Result{}, err
		}
		// Without Renamer, m.writes is held alone (see lock), so no other
		// change through this Memory runs while Move copies and removes.
		if alone {
			err = Move(ctx, m.store, oldName, newName, m.opts.MaxReadSize)
		} else {
			err = ForwardRename(ctx, m.store, oldName, newName)
		}
		if err == nil {
			return success("Successfully renamed " + c.OldPath + " to " + c.NewPath)
		}
		removeCreated(ctx, m.store, created)
		switch {
		case errors.Is(err, ErrOutcomeUnknown):
			// Made in part, or maybe made (a copy left behind, an
			// answer lost): failure says so, never "already exists".
			return Result{}, err
		case !alone && unsupported(err):
			m.noRename.Store(true)
			return Result{}, errRetryAlone
		case errors.Is(err, ErrExist):
			return Result{}, refusef("The destination %s already exists", c.NewPath)
		case errors.Is(err, ErrNotExist):
			if _, serr := m.store.Stat(ctx, oldName); serr == nil && attempt < 3 {
				continue // the source is there: the new parent went
			}
			return Result{}, refusef(missingPathShort, c.OldPath)
		}
		return Result{}, err
	}
}
