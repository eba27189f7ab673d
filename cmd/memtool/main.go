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
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A write to a closed stdout (memtool exec | head -1) then fails with
	// EPIPE, which the commands report (exit status 4), instead of killing
	// the process with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	ctx, signalled := signalContext()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() { signalled(<-sigs) }()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// signalContext returns a context that signalled ends, with the signal as
// its cause (see signalOf). The commands that take signals themselves
// (exec, chat, mcp) look at it once they do, so that a signal that came
// while they started is not lost.
func signalContext() (context.Context, func(os.Signal)) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, func(sig os.Signal) { cancel(signalCause{sig}) }
}

// signalCause is the cause of a signalContext's end.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() + " signal received" }

// signalOf returns the signal that ended ctx, or nil.
func signalOf(ctx context.Context) os.Signal {
	var c signalCause
	if errors.As(context.Cause(ctx), &c) {
		return c.sig
	}
	return nil
}
