// Package wait holds the one pause the stores take between tries (of a
// lock, a busy database, a request): a sleep that ends early when its
// context does.
package wait

import (
	"context"
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
