package memtool

import (
	"context"
	"errors"
)

func (m *Memory) delete(ctx context.Context, c *Delete, alone bool) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	if name == "" {
		return Result{}, refusef("Cannot delete the %s directory itself", Root)
	}
	fi, err := m.stat(ctx, name, missingPathShort, c.Path)
	switch {
	case err != nil:
		return Result{}, err
	case wantDir && !fi.IsDir():
		return Result{}, refusef("The path %s is not a directory", c.Path)
	}
	switch {
	case !fi.IsDir():
		err = m.store.Remove(ctx, name)
	case alone: // without RemoveAller, m.writes is held alone (see lock)
		err = RemoveAll(ctx, m.store, name)
	default:
		err = ForwardRemoveAll(ctx, m.store, name)
		if unsupported(err) {
			m.noRemoveAll.Store(true)
			return Result{}, errRetryAlone
		}
	}
	if errors.Is(err, ErrNotExist) && !errors.Is(err, ErrOutcomeUnknown) {
		return Result{}, refusef(missingPathShort, c.Path)
	}
	if err != nil {
		return Result{}, err
	}
	return success("Successfully deleted " + c.Path)
}
