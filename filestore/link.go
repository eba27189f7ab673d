// This file holds where a replace or an update of a name writes: through
// the symbolic links an operator made inside the store, to the file they
// lead to, so that the link stays and both names keep meaning one file.

package filestore

import (
	"context"
	"io/fs"
	"strings"

	"github.com/memtool/memtool"
)

// target returns the name a replace or an update of name writes, holding
// the write lock: name with the links on its way followed as the store
// follows them (ResolveName), so that a link to a file is written through
// and stays a link, never replaced by a file of its own. A link the store
// does not follow (out of the store, a loop) gives name back, whose use
// then fails as any access through it does. A link to one of the store's
// own names (.memtool…), which the path gate keeps from the model, is
// refused with memtool.ErrEscapes; a link to the store's directory itself
// is a directory (memtool.ErrIsDir).
//
// Links on the way to name's directory are followed by the root anyway:
// only a link at name itself needs the walk, so a name that is not one
// costs one lstat.
func (s *Store) target(ctx context.Context, op, name string) (string, error) {
	if fi, err := s.root.Lstat(rootName(name)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return name, nil // what is there (or why not) is for the write to find
	}
	t := s.ResolveName(ctx, name)
	if err := ctx.Err(); err != nil {
		return "", err // ResolveName gave name back, unresolved
	}
	switch {
	case t == name:
		return name, nil
	case t == "":
		return "", classErr(op, name, memtool.ErrIsDir)
	case hasOwn(t) && !hasOwn(name):
		return "", classErr(op, name, memtool.ErrEscapes)
	}
	return t, nil
}

// hasOwn reports whether a component of name is one of the store's own
// names.
func hasOwn(name string) bool {
	for _, c := range splitName(name) {
		if strings.HasPrefix(c, ownPrefix) {
			return true
		}
	}
	return false
}
