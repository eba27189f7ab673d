// Package lru is a map bounded by size and idleness, least recently used
// first out: the server's open tenants and rate limiters, and the
// keyring's cache of keys read.
package lru

import (
	"container/list"
	"time"
)

// Cache is a map bounded by size and idleness: entries beyond max, and
// entries not used for idle, are evicted least recently used first, when
// evictable says they may be (an entry in use is kept, whatever the
// bounds). It is not safe for concurrent use: its owner locks.
type Cache[V any] struct {
	max  int
	idle time.Duration
	m    map[string]*list.Element
	l    list.List // of *entry[V], most recently used first
}

type entry[V any] struct {
	key  string
	val  V
	used time.Time
}

// New returns an empty cache of at most max entries, each kept idle at
// most idle.
func New[V any](max int, idle time.Duration) *Cache[V] {
	return &Cache[V]{max: max, idle: idle, m: map[string]*list.Element{}}
}

// Get returns the value of key, marking it used at now.
func (c *Cache[V]) Get(key string, now time.Time) (V, bool) {
	e, ok := c.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	ent := c.use(e, now)
	return ent.val, true
}

// Add puts val under key (which must not be there), used at now.
func (c *Cache[V]) Add(key string, val V, now time.Time) {
	c.m[key] = c.l.PushFront(&entry[V]{key: key, val: val, used: c.latest(now)})
}

// Put sets the value of key, used at now, whether it was there or not.
func (c *Cache[V]) Put(key string, val V, now time.Time) {
	if e, ok := c.m[key]; ok {
		c.use(e, now).val = val
		return
	}
	c.Add(key, val, now)
}

// Len is the number of entries.
func (c *Cache[V]) Len() int { return c.l.Len() }

// Touch marks key used at now, if it is there, making it the most
// recently used: for the end of a use that Get began.
func (c *Cache[V]) Touch(key string, now time.Time) {
	if e, ok := c.m[key]; ok {
		c.use(e, now)
	}
}

// use marks e used at now and makes it the most recently used.
func (c *Cache[V]) use(e *list.Element, now time.Time) *entry[V] {
	ent := e.Value.(*entry[V])
	ent.used = c.latest(now)
	c.l.MoveToFront(e)
	return ent
}

// latest is now, or the time of the most recent use if that is later
// (callers' clocks, read before they lock, may disagree a little): the
// entries stay in the order of their times, which Evict relies on.
func (c *Cache[V]) latest(now time.Time) time.Time {
	if f := c.l.Front(); f != nil {
		if used := f.Value.(*entry[V]).used; now.Before(used) {
			return used
		}
	}
	return now
}

// Remove drops key if its value is val (a later value under the same key
// stays).
func (c *Cache[V]) Remove(key string, is func(V) bool) {
	if e, ok := c.m[key]; ok && is(e.Value.(*entry[V]).val) {
		c.l.Remove(e)
		delete(c.m, key)
	}
}

// Evict removes, least recently used first, the entries over the size
// bound or idle since before now-idle that evictable allows, and returns
// their values. An entry evictable refuses is passed over, not waited
// for. It stops at the first entry within both bounds: the entries before
// it were used later still.
func (c *Cache[V]) Evict(now time.Time, evictable func(V) bool) []V {
	var out []V
	for e := c.l.Back(); e != nil; {
		prev := e.Prev()
		ent := e.Value.(*entry[V])
		over, idle := c.l.Len() > c.max, now.Sub(ent.used) >= c.idle
		if !over && !idle {
			break
		}
		if evictable(ent.val) {
			c.l.Remove(e)
			delete(c.m, ent.key)
			out = append(out, ent.val)
		}
		e = prev
	}
	return out
}
