// Command memtool runs Claude's memory tool commands against a memory store.
//
//	memtool exec [--store URL]          the machine interface: JSON lines in, answers out
//	memtool view PATH [--range A,B]     and create, str_replace, insert, delete, rename
//
// Run `memtool help` for the whole list.
//
// exec bounds what one input line can cost: its length, the calls of one
// turn, the bytes of their answers, and the time of each call (--timeout).
// SIGINT or SIGTERM cancels the calls in progress, and exec exits once
// their line is answered, or a grace period is over; a second signal ends
// it at once. A closed stdout is a write error, not death by SIGPIPE: exec
// and the one-command verbs exit with status 4.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A write to a closed stdout (memtool exec | head -1) then fails with
	// EPIPE, which the commands report (exit status 4), instead of killing
	// the process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
