// Package tenantlock gives a wrapper one lock value per tenant, shared by
// all the stores its Tenant made for that tenant, so that what the
// wrapper serialises within a tenant holds however many stores of the
// tenant are in use (limits' checks, the renames of limits and secrets).
package tenantlock

import (
	"runtime"
	"sync"
	"weak"
)

// Locks holds the lock values of the tenants whose stores are in use. A
// tenant's value lives as long as a store holds it; then its entry goes.
// The zero Locks is not usable: make one with New. It is safe for
// concurrent use.
type Locks[T any] struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[entry[T]]
}

// An entry is a tenant's value; its id also keeps it out of the tiny
// allocator, whose objects AddCleanup may never see freed.
type entry[T any] struct {
	v  T
	id string
}

// New returns an empty Locks.
func New[T any]() *Locks[T] { return &Locks[T]{m: map[string]weak.Pointer[entry[T]]{}} }

// Get returns the value of tenant id: the one a store still holds, or a
// new zero value.
func (l *Locks[T]) Get(id string) *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.m[id].Value(); e != nil {
		return &e.v
	}
	e := &entry[T]{id: id}
	wp := weak.Make(e)
	l.m[id] = wp
	runtime.AddCleanup(e, func(id string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.m[id] == wp {
			delete(l.m, id)
		}
	}, id)
	return &e.v
}

// len is the number of tenants with an entry, for the package's tests.
func (l *Locks[T]) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
