// Package testclock is a clock that tests move by hand, safe for the
// goroutines of the code under test: give its Now to an Options.Now.
package testclock

import (
	"sync"
	"time"
)

// A Clock is a settable time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock that reads t until moved.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
