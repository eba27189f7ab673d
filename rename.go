package memtool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

func (m *Memory) rename(ctx context.Context, c *Rename) (Result, error) {
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
	fi, err := m.store.Stat(ctx, oldName)
	switch {
	case errors.Is(err, ErrNotExist):
		return Result{}, refusef("The path %s does not exist", c.OldPath)
	case err != nil:
		return Result{}, err
	case (oldDir || newDir) && !fi.IsDir():
		return Result{}, refusef("Cannot rename %s to %s: a path ending in '/' names a directory, and %s is a file", c.OldPath, c.NewPath, c.OldPath)
	}
	if _, err := m.store.Stat(ctx, newName); err == nil {
		return Result{}, refusef("The destination %s already exists", c.NewPath)
	} else if !errors.Is(err, ErrNotExist) {
		return Result{}, err
	}
	if fi.IsDir() && strings.HasPrefix(newName, oldName+"/") {
		return Result{}, refusef("Cannot move the directory %s into itself (%s). Nothing was changed.", c.OldPath, c.NewPath)
	}
	created, err := m.mkdirAll(ctx, c.NewPath, path.Dir(newName))
	if err != nil {
		return Result{}, err
	}
	err = m.move(ctx, oldName, newName)
	if err != nil {
		m.removeCreated(ctx, created)
		switch {
		case errors.Is(err, ErrExist):
			return Result{}, refusef("The destination %s already exists", c.NewPath)
		case errors.Is(err, ErrNotExist):
			return Result{}, refusef("The path %s does not exist", c.OldPath)
		}
		return Result{}, err
	}
	return success("Successfully renamed " + c.OldPath + " to " + c.NewPath)
}

// move renames with the store's Renamer, or else with the fallback: copy
// the tree entry by entry, then remove the entries copied. The caller holds
// m.writes alone (see lock), so no other change through this Memory runs
// meanwhile (a view may see both trees). The fallback never removes what
// it did not make or copy: if the copy fails, it removes only the entries
// it created, deepest first; after the copy, only the source entries it
// copied, so that an entry another process put into either tree meanwhile
// stays, with the directories that hold it. Across processes it is not
// atomic: another process may see both trees or part of one, and its
// change to a file already copied is lost when that file is removed. A
// crash, or a store failure while removing, leaves the new tree and what
// remains of the old one.
func (m *Memory) move(ctx context.Context, oldName, newName string) error {
	if r, ok := m.store.(Renamer); ok {
		return r.Rename(ctx, oldName, newName)
	}
	var copied []string // the source names, parents first
	err := copyTree(ctx, m.store, oldName, newName, m.opts.MaxReadSize, &copied)
	ctx = context.WithoutCancel(ctx) // from here on, finish what was begun
	if err != nil {
		for i := len(copied) - 1; i >= 0; i-- {
			m.store.Remove(ctx, newName+strings.TrimPrefix(copied[i], oldName))
		}
		return err
	}
	for i := len(copied) - 1; i >= 0; i-- {
		err := m.store.Remove(ctx, copied[i])
		if err != nil && !errors.Is(err, ErrNotExist) && !errors.Is(err, ErrNotEmpty) {
			return err
		}
	}
	return nil
}

// copyTree copies the file or directory src to dst, which must not exist,
// and appends to copied each source entry whose copy it created.
func copyTree(ctx context.Context, s Store, src, dst string, limit int64, copied *[]string) error {
	fi, err := s.Stat(ctx, src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := s.Mkdir(ctx, dst); err != nil {
			return err
		}
		*copied = append(*copied, src)
		entries, err := s.ReadDir(ctx, src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(ctx, s, path.Join(src, e.Name), path.Join(dst, e.Name), limit, copied); err != nil {
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
		*copied = append(*copied, src)
		return nil
	}
	return fmt.Errorf("copy %s: %w", src, fs.ErrInvalid)
}
