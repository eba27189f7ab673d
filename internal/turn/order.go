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
// link in a directory store, two paths can lead to one file.
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
	for i, cmd := range cmds {
		names[i], views[i] = touchedNames(ctx, store, cmd)
		for j := range i {
			if !(views[i] && views[j]) && overlap(names[i], names[j]) {
				after[i] = append(after[i], j)
			}
		}
	}
	return after
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
		if name, _, err := memtool.CleanPath(p); err == nil {
			names = append(names, fold(name))
			if to := memtool.ResolveName(ctx, store, name); to != name {
				names = append(names, fold(to))
			}
		}
	}
	_, view = cmd.(*memtool.View)
	return names, view
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
