package turn

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/memtool/memtool"
)

// Follows returns, for each tool input of one turn, the earlier inputs it
// must run after so that the turn means what it would one call after
// another: those whose paths overlap its own (the same entry, or a
// directory and something in it; a rename touches both of its paths).
// Calls on unrelated paths follow nothing of each other and may run at
// the same time, and so may two views, which change nothing. An input that
// does not parse touches nothing. A path is taken both as written and as
// store resolves it (memtool.ResolveName; store may be nil): through a
// link in a directory store, two paths can lead to one file. In such a
// store, a rename may move a link (or a directory holding one), so a call
// at or below the new path of an earlier rename follows every earlier call
// and every later call follows it (but for two views).
func Follows(ctx context.Context, store memtool.Store, inputs []json.RawMessage) [][]int {
	return follows(ctx, store, parse(inputs))
}

// parse returns the commands of a turn's tool inputs, nil for one that
// does not parse.
func parse(inputs []json.RawMessage) []memtool.Command {
	cmds := make([]memtool.Command, len(inputs))
	for i, in := range inputs {
		cmds[i], _ = memtool.ParseCommand(in)
	}
	return cmds
}

// follows is Follows of parsed commands (nil: touches nothing).
func follows(ctx context.Context, store memtool.Store, cmds []memtool.Command) [][]int {
	after := make([][]int, len(cmds))
	if len(cmds) < 2 {
		return after // one call follows nothing: no name to resolve
	}
	names := make([][]string, len(cmds))
	views := make([]bool, len(cmds))
	// wild[i]: calls[i] names an entry at or below the new path of an
	// earlier rename in a store with links. The rename may have moved a
	// link, or a directory holding a relative one, so where that name
	// leads when the call runs is not where it led before the turn: the
	// call runs in its order with every call but views of views.
	wild := make([]bool, len(cmds))
	var moved []string // the new paths of the renames so far, in a store with links
	links := memtool.HasResolver(store)
	for i, cmd := range cmds {
		names[i], views[i] = touchedNames(ctx, store, cmd)
		wild[i] = overlapsMoved(names[i], moved)
		for j := range i {
			if !(views[i] && views[j]) && (wild[i] || wild[j] || overlap(names[i], names[j])) {
				after[i] = append(after[i], j)
			}
		}
		if r, ok := cmd.(*memtool.Rename); ok && links {
			moved = append(moved, pathNames(ctx, store, r.NewPath)...)
		}
	}
	return after
}

// overlapsMoved reports whether one of names is one of moved or below one.
func overlapsMoved(names, moved []string) bool {
	for _, x := range names {
		for _, m := range moved {
			if x == m || m == "" || strings.HasPrefix(x, m+"/") {
				return true
			}
		}
	}
	return false
}

// touchedNames returns the store names a command refers to ("" is the
// root), case-folded, and whether it is a view; nil for no command. On a
// case-insensitive file system (macOS's, by default) /memories/Dir and
// /memories/dir are one directory: a delete of one and a create in the
// other must run in their order; so must a delete of /memories/real and a
// create in /memories/link, a link to it. Each name is given as written
// and as store resolves it. Ordering calls that touch two entries is
// harmless; running at once two that touch one can lose a change.
func touchedNames(ctx context.Context, store memtool.Store, cmd memtool.Command) (names []string, view bool) {
	var paths []string
	switch c := cmd.(type) {
	case nil:
		return nil, false
	case *memtool.Rename:
		paths = []string{c.OldPath, c.NewPath}
	default:
		paths = []string{c.Target()}
	}
	for _, p := range paths {
		names = append(names, pathNames(ctx, store, p)...)
	}
	_, view = cmd.(*memtool.View)
	return names, view
}

// pathNames returns the store names of the virtual path p, case-folded:
// as written and as store resolves it; none if the gate refuses p.
func pathNames(ctx context.Context, store memtool.Store, p string) []string {
	name, _, err := memtool.CleanPath(p)
	if err != nil {
		return nil
	}
	names := []string{fold(name)}
	if to := memtool.ResolveName(ctx, store, name); to != name {
		names = append(names, fold(to))
	}
	return names
}

func fold(name string) string { return strings.ToLower(strings.ToUpper(name)) }

// overlap reports whether two calls touch the same entry, or one touches a
// directory the other touches something in.
func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || x == "" || y == "" || strings.HasPrefix(x, y+"/") || strings.HasPrefix(y, x+"/") {
				return true
			}
		}
	}
	return false
}
