package server

import (
	"container/list"
	"time"
)

// lru is a map bounded by size and idleness: entries beyond max, and
// entries not used for idle, are evicted least recently used first, when
// evictable says they may be (an entry in use is kept, whatever the
// bounds). It is not safe for concurrent use: its owner locks.
type lru[V any] struct {
	max  int
	idle time.Duration
	m    map[string]*list.Element
	l    list.List // of *lruEntry[V], most recently used first
}

type lruEntry[V any] struct {
	key  string
	val  V
	used time.Time
}

func newLRU[V any](max int, idle time.Duration) *lru[V] {
	return &lru[V]{max: max, idle: idle, m: map[string]*list.Element{}}
}

// get returns the value of key, marking it used at now.
func (c *lru[V]) get(key string, now time.Time) (V, bool) {
	e, ok := c.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.l.MoveToFront(e)
	ent := e.Value.(*lruEntry[V])
	ent.used = now
	return ent.val, true
}

// add puts val under key (which must not be there), used at now.
func (c *lru[V]) add(key string, val V, now time.Time) {
	c.m[key] = c.l.PushFront(&lruEntry[V]{key: key, val: val, used: now})
}

// touch marks key used at now, if it is there, without reordering the
// entries: for the end of a use that get began.
func (c *lru[V]) touch(key string, now time.Time) {
	if e, ok := c.m[key]; ok {
		e.Value.(*lruEntry[V]).used = now
	}
}

// remove drops key if its value is val (a later value under the same key
// stays).
func (c *lru[V]) remove(key string, is func(V) bool) {
	if e, ok := c.m[key]; ok && is(e.Value.(*lruEntry[V]).val) {
		c.l.Remove(e)
		delete(c.m, key)
	}
}

// evict removes, least recently used first, the entries over the size
// bound or idle since before now-idle that evictable allows, and returns
// their values. It stops at the first entry that is within both bounds.
func (c *lru[V]) evict(now time.Time, evictable func(V) bool) []V {
	var out []V
	for e := c.l.Back(); e != nil; {
		prev := e.Prev()
		ent := e.Value.(*lruEntry[V])
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
