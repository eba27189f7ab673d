package lru

import (
	"slices"
	"testing"
	"time"
)

func always(int) bool { return true }

// Put replaces a value and makes it the most recently used; Evict drops
// the least recently used first, past the size bound or idle, skipping
// those evictable refuses.
func TestCache(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New[int](2, time.Minute)
	c.Put("a", 1, t0)
	c.Put("b", 2, t0)
	c.Put("a", 10, t0) // a is now the most recently used
	c.Put("c", 3, t0)
	if got := c.Evict(t0, always); !slices.Equal(got, []int{2}) {
		t.Errorf("over the bound: evicted %v, want [2] (b, least recently used)", got)
	}
	if v, ok := c.Get("a", t0); !ok || v != 10 {
		t.Errorf("a = %v, %v; want the value Put replaced, 10", v, ok)
	}
	if c.Len() != 2 {
		t.Errorf("Len %d, want 2", c.Len())
	}
	// Idle: c is older than a (Get marked a used later); c is kept while
	// evictable refuses it, a goes.
	later := t0.Add(time.Minute)
	c.Touch("a", t0.Add(time.Second))
	if got := c.Evict(later.Add(time.Second), func(v int) bool { return v != 3 }); !slices.Equal(got, []int{10}) {
		t.Errorf("idle: evicted %v, want [10] (c refused)", got)
	}
	if _, ok := c.Get("c", later); !ok {
		t.Error("an entry evictable refused was dropped")
	}
}

// An entry whose use ended last is the most recently used, whenever the
// use began: one whose use began later but ended earlier is evicted once
// idle, ahead of it, and whether or not that entry is still in use.
func TestTouchOrders(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, longInUse := range []bool{false, true} {
		c := New[int](10, time.Minute)
		c.Add("long", 1, t0)
		c.Add("short", 2, t0.Add(time.Second))
		c.Touch("short", t0.Add(2*time.Second)) // short's use ends
		c.Touch("long", t0.Add(time.Hour))      // a use of long ends much later
		evictable := always
		if longInUse {
			evictable = func(v int) bool { return v != 1 }
		}
		// short has been idle past the bound; long has not.
		now := t0.Add(2*time.Second + time.Minute)
		if got := c.Evict(now, evictable); !slices.Equal(got, []int{2}) {
			t.Errorf("long in use %v: evicted %v, want [2]: short is idle, long was used since", longInUse, got)
		}
		if c.Len() != 1 {
			t.Errorf("long in use %v: %d entries left, want 1", longInUse, c.Len())
		}
	}
}
