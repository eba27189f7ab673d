package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/wait"
)

// gates makes the writes of one tenant take turns within this process
// before they take a connection of the pool: at most writersPerTenant of
// them at a time hold a connection while they wait for, or hold, the
// tenant's lock in the server, so that writers queued behind one tenant's
// lock do not hold every connection of the pool while reads and other
// tenants' writes wait for one. The lock in the server is still what
// serialises the writes (across processes); a gate only bounds how many
// wait for it from one process.
type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

// gate is one tenant's turns: its channel holds a token for each write of
// the tenant that holds a connection.
type gate struct {
	turn  chan struct{}
	users int // writes holding or waiting for the turn; guarded by gates.mu
}

// enter waits for tenant's turn, at most timeout (then an error wrapping
// memtool.ErrBusy) or until ctx ends, and returns the function that ends
// it.
func (g *gates) enter(ctx context.Context, tenant string, timeout time.Duration) (leave func(), err error) {
	g.mu.Lock()
	if g.m == nil {
		g.m = map[string]*gate{}
	}
	t := g.m[tenant]
	if t == nil {
		t = &gate{turn: make(chan struct{}, writersPerTenant)}
		g.m[tenant] = t
	}
	t.users++
	g.mu.Unlock()
	done := func() {
		g.mu.Lock()
		if t.users--; t.users == 0 {
			delete(g.m, tenant)
		}
		g.mu.Unlock()
	}
	// wait.Turn takes a free turn first, even once the timeout has run
	// out (a short one, on a busy machine).
	switch err := wait.Turn(ctx, t.turn, time.Now().Add(timeout)); {
	case errors.Is(err, wait.ErrDeadline):
		done()
		return nil, fmt.Errorf("%w: other writes of this tenant in this process held its lock for %v", memtool.ErrBusy, timeout)
	case err != nil:
		done()
		return nil, err
	}
	return func() { <-t.turn; done() }, nil
}

// writersPerTenant is how many writes of one tenant may hold a connection
// at once: one holds the tenant's lock, and the next waits for it in the
// server, which hands the lock over as the first commits, sooner than the
// process could send the next write once the first returns.
const writersPerTenant = 2
