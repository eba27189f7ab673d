// Package wait holds the one pause the stores take between tries (of a
// lock, a busy database, a request): a sleep that ends early when its
// context does; and the wait of a process's writers for their turn.
package wait

import (
	"context"
	"errors"
	"time"
)

// Sleep waits for d, or until ctx ends, whichever comes first. It returns
// ctx's error if ctx ended first, and nil after the full wait; a d of zero
// or less does not wait, and returns ctx's error, if any.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrDeadline is Turn's error when its deadline passed first.
var ErrDeadline = errors.New("the deadline passed")

// Turn waits for a turn on turn, a channel of capacity 1 (or n, for n
// turns) that the holder of a turn has sent to and receives from to end
// it: it sends, waiting until deadline or ctx's end; a free turn is taken
// even once the deadline has passed. Waiters get their turns in the order they
// came (a channel wakes its waiting senders in order). It returns ctx's
// error if ctx ended first, and ErrDeadline if the deadline passed.
func Turn(ctx context.Context, turn chan<- struct{}, deadline time.Time) error {
	select {
	case turn <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return ErrDeadline
	}
}
