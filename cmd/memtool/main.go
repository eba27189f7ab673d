// Command memtool runs Claude's memory tool commands against a memory store.
//
//	memtool exec [--store URL]          the machine interface: JSON lines in, answers out
//	memtool view PATH [--range A,B]     and create, str_replace, insert, delete, rename
//
// Run `memtool help` for the whole list.
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
