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
