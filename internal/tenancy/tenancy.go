// Package tenancy is the claim-on-first-use tenancy of the stores that
// keep their tenants in one database or bucket (sqlitestore, pgstore,
// objectstore).
//
// Such a store records its mode, Single or Multi, the first time it is
// changed: by a write of the tenant-less store (Single) or by its first
// Tenant call (Multi). A read of the tenant-less store records nothing
// (Peek): an unused store reads as empty in either mode. Once recorded the mode never changes, and a use in the other
// mode fails with an error wrapping memtool.ErrTenancy. The record is the
// store's own (a row, an object): Record is how this package reads and
// creates it.
package tenancy

import (
	"context"
	"errors"
	"sync"

	"github.com/memtool/memtool"
)

// The two modes a store records.
const (
	Single = "single"
	Multi  = "multi"
)

// Record is a store's record of its mode.
type Record interface {
	// Mode returns the recorded mode, or "" if there is none yet.
	Mode(ctx context.Context) (string, error)
	// Create records mode unless a mode is already recorded, in which
	// case it changes nothing and succeeds: of two processes creating at
	// once, one wins and the other sees its mode. An error wrapping
	// memtool.ErrReadOnly says nothing can be recorded.
	Create(ctx context.Context, mode string) error
}

// Claim records mode on first use and checks it afterwards. On a store
// that takes no writes and has no mode yet it claims nothing and returns
// (false, nil): nothing can be written there in either mode, and a later
// use claims again. Errors of rec are returned as they are.
func Claim(ctx context.Context, rec Record, mode string) (claimed bool, err error) {
	got, err := rec.Mode(ctx)
	if err != nil {
		return false, err
	}
	if got == "" {
		switch err := rec.Create(ctx, mode); {
		case errors.Is(err, memtool.ErrReadOnly):
			return false, nil
		case err != nil:
			return false, err
		}
		if got, err = rec.Mode(ctx); err != nil {
			return false, err
		}
	}
	return check(got, mode)
}

// check compares the recorded mode got with the mode asked for.
func check(got, mode string) (bool, error) {
	if got != mode {
		return false, memtool.TenancyError(got == Multi)
	}
	return true, nil
}

// Peek checks the recorded mode, as Claim does, without recording one: on
// a store with no mode yet it returns (false, nil), so a read of the
// tenant-less view of an unused store (which finds it empty) decides
// nothing, and a later Tenant call may still make it multi-tenant. A
// recorded mode other than mode fails with an error wrapping
// memtool.ErrTenancy; the one asked for returns (true, nil).
func Peek(ctx context.Context, rec Record, mode string) (claimed bool, err error) {
	got, err := rec.Mode(ctx)
	if err != nil || got == "" {
		return false, err
	}
	return check(got, mode)
}

// Listed returns whether the store whose mode rec records has tenants to
// list: none on an unused store (false, nil), and an error wrapping
// memtool.ErrTenancy on a single-tenant one.
func Listed(ctx context.Context, rec Record) (bool, error) { return Peek(ctx, rec, Multi) }

// Gate makes one store claim its mode before its first use. The zero
// Gate has not claimed yet; it is safe for concurrent use.
type Gate struct {
	mu      sync.Mutex
	claimed bool
	// claiming is closed when the claim under way ends; nil while none
	// is.
	claiming chan struct{}
}

// Claimed returns a Gate whose claim is already made (a tenant's store,
// made by a Tenant call that claimed Multi).
func Claimed(claimed bool) *Gate { return &Gate{claimed: claimed} }

// Pass returns ctx's error if it has ended; otherwise it makes the claim
// unless it has been made, calling claim (at most one call at a time). A
// Pass that waits for another's claim stops waiting, with ctx's error,
// when ctx ends: a claim may wait for a lock as long as the store allows.
func (g *Gate) Pass(ctx context.Context, claim func(ctx context.Context) (bool, error)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.mu.Lock()
		if g.claimed {
			g.mu.Unlock()
			return nil
		}
		if g.claiming == nil {
			g.claiming = make(chan struct{})
			g.mu.Unlock()
			return g.claim(ctx, claim)
		}
		claiming := g.claiming
		g.mu.Unlock()
		select {
		case <-claiming:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// claim calls claim as the one claim under way, and records what it
// claimed (should it panic too, the next Pass claims again).
func (g *Gate) claim(ctx context.Context, claim func(ctx context.Context) (bool, error)) error {
	claimed := false
	defer func() {
		g.mu.Lock()
		g.claimed = claimed
		close(g.claiming)
		g.claiming = nil
		g.mu.Unlock()
	}()
	claimed, err := claim(ctx)
	return err
}
