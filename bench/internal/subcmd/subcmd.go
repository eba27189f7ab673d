// Package subcmd runs the subcommand that a bench program's first
// argument names (bench gen|exec|bare|report, parallel turn|procs|bare).
package subcmd

import (
	"fmt"
	"io"
	"strings"
)

// A Command is one subcommand: its name, and what runs it on the
// arguments after the name.
type Command struct {
	Name string
	Run  func(args []string) error
}

// Run runs the command of cmds that args[0] names, on the arguments after
// it, and returns the program's exit code. Without arguments it writes the
// usage line, "usage: prog name|name… [flags]", to stderr and returns 2;
// a failed command, or a name no command has, writes "prog name: error"
// and returns 1.
func Run(prog string, args []string, stderr io.Writer, cmds []Command) int {
	if len(args) < 1 {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name
		}
		fmt.Fprintf(stderr, "usage: %s %s [flags]\n", prog, strings.Join(names, "|"))
		return 2
	}
	err := fmt.Errorf("unknown subcommand %q", args[0])
	for _, c := range cmds {
		if c.Name == args[0] {
			err = c.Run(args[1:])
			break
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", prog, args[0], err)
		return 1
	}
	return 0
}
