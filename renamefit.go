package memtool

import (
	"context"
	"errors"
	"strings"
)

// grows reports whether a rename from oldName to newName (clean names)
// may give an entry below oldName a path longer or deeper than it has:
// only then need the moved tree be checked against the path gate's caps.
func grows(oldName, newName string) bool {
	return len(newName) > len(oldName) || depth(newName) > depth(oldName)
}

// renameGrows reports whether c, once its paths pass the gate, may move
// entries to longer or deeper paths (grows); a path the gate refuses
// moves nothing.
func renameGrows(c *Rename) bool {
	oldName, _, err := CleanPath(c.OldPath)
	if err != nil {
		return false
	}
	newName, _, err := CleanPath(c.NewPath)
	return err == nil && grows(oldName, newName)
}

// depth is the number of names in a clean name below the root.
func depth(name string) int {
	if name == "" {
		return 0
	}
	return strings.Count(name, "/") + 1
}

// movedPathsFit refuses the rename of the directory oldName to newName if
// an entry below it would get a path over MaxPathBytes or deeper than
// MaxDepth: past the gate's caps no command could reach it again (view,
// edit, delete and rename all refuse its path). It walks the tree only when
// the new name is longer or deeper than the old. An entry made in the tree
// by another process (or another Memory over the store) after the walk is
// moved unchecked, as any change from elsewhere may land between two steps;
// through this Memory none can, as lock holds writes alone for such a
// rename.
func (m *Memory) movedPathsFit(ctx context.Context, c *Rename, oldName, newName string) error {
	if !grows(oldName, newName) {
		return nil
	}
	err := Walk(ctx, m.store, oldName, func(name string, _ FileInfo) error {
		moved := newName + strings.TrimPrefix(name, oldName)
		vp := VirtualPath(moved)
		switch {
		case len(vp) > MaxPathBytes:
			return refusef("Cannot rename %s to %s: %s would become %s, which is too long: %d bytes, more than the limit of %d bytes. Nothing was changed.",
				c.OldPath, c.NewPath, VirtualPath(name), vp, len(vp), MaxPathBytes)
		case depth(moved) > MaxDepth:
			return refusef("Cannot rename %s to %s: %s would become %s, which is too deep: %d levels below %s, more than the limit of %d. Nothing was changed.",
				c.OldPath, c.NewPath, VirtualPath(name), vp, depth(moved), Root, MaxDepth)
		}
		return nil
	})
	var refusal Refusal
	if errors.As(err, &refusal) || ctx.Err() != nil {
		return err
	}
	// Gone meanwhile (the rename itself says so), or a part of the tree
	// the walk could not read (an operator's directory without read
	// permission): the check is a guard, not a condition of the rename,
	// which goes ahead as it would without it.
	return nil
}
