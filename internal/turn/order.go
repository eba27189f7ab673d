package turn

import (
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
// does not parse touches nothing.
func Follows(inputs []json.RawMessage) [][]int {
	names := make([][]string, len(inputs))
	views := make([]bool, len(inputs))
	follows := make([][]int, len(inputs))
	for i, in := range inputs {
		names[i], views[i] = touchedNames(in)
		for j := range i {
			if !(views[i] && views[j]) && overlap(names[i], names[j]) {
				follows[i] = append(follows[i], j)
			}
		}
	}
	return follows
}

// touchedNames returns the store names a tool input refers to ("" is the
// root), and whether it is a view; nil when the input does not parse,
// since such a call touches nothing.
func touchedNames(input json.RawMessage) (names []string, view bool) {
	cmd, err := memtool.ParseCommand(input)
	if err != nil {
		return nil, false
	}
	var paths []string
	switch c := cmd.(type) {
	case *memtool.Rename:
		paths = []string{c.OldPath, c.NewPath}
	default:
		paths = []string{c.Target()}
	}
	for _, p := range paths {
		if name, _, err := memtool.CleanPath(p); err == nil {
			names = append(names, name)
		}
	}
	_, view = cmd.(*memtool.View)
	return names, view
}

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
