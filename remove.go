package memtool

import (
	"context"
	"errors"
	"path"
)

func (m *Memory) delete(ctx context.Context, c *Delete) (Result, error) {
	name, wantDir, err := CleanPath(c.Path)
	if err != nil {
		return Result{}, err
	}
	if name == "" {
		return Result{}, refusef("Cannot delete the %s directory itself", Root)
	}
	fi, err := m.store.Stat(ctx, name)
	switch {
	case errors.Is(err, ErrNotExist):
		return Result{}, refusef("The path %s does not exist", c.Path)
	case err != nil:
		return Result{}, err
	case wantDir && !fi.IsDir():
		return Result{}, refusef("The path %s is not a directory", c.Path)
	}
	if fi.IsDir() {
		err = m.removeAll(ctx, name)
	} else {
		err = m.store.Remove(ctx, name)
	}
	if errors.Is(err, ErrNotExist) {
		return Result{}, refusef("The path %s does not exist", c.Path)
	}
	if err != nil {
		return Result{}, err
	}
	return success("Successfully deleted " + c.Path)
}

func (m *Memory) removeAll(ctx context.Context, name string) error {
	if ra, ok := m.store.(RemoveAller); ok {
		return ra.RemoveAll(ctx, name)
	}
	// The fallback; the caller holds m.writes alone (see lock).
	return removeTree(ctx, m.store, name)
}

// removeTree removes name and everything below it, deepest first.
func removeTree(ctx context.Context, s Store, name string) error {
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
			if err := removeTree(ctx, s, path.Join(name, e.Name)); err != nil && !errors.Is(err, ErrNotExist) {
				return err
			}
		}
	}
	return s.Remove(ctx, name)
}
