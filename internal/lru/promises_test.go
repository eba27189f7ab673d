package lru

import (
	"slices"
	"testing"
	"time"
)

// Remove drops a key only while it holds the value the caller had: a
// value Put under the key since stays.
func TestRemoveKeepsLaterValue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New[int](10, time.Minute)
	c.Add("a", 1, t0)
	c.Put("a", 2, t0)
	c.Remove("a", func(v int) bool { return v == 1 })
	if v, ok := c.Get("a", t0); !ok || v != 2 {
		t.Errorf("after Remove of the old value: %v, %v; want the later 2 kept", v, ok)
	}
	c.Remove("a", func(v int) bool { return v == 2 })
	if _, ok := c.Get("a", t0); ok || c.Len() != 0 {
		t.Errorf("after Remove of the value held: still there (Len %d)", c.Len())
	}
	c.Remove("missing", func(int) bool { return true }) // nothing to do
	// The removed key is gone from the list too: Evict does not see it.
	c.Add("b", 3, t0)
	if got := c.Evict(t0.Add(time.Hour), always); !slices.Equal(got, []int{3}) {
		t.Errorf("Evict after Remove: %v, want [3]", got)
	}
}

// A use stamped earlier than the most recent one (a caller's clock read
// before it locked) counts as used at that most recent time: the entry is
// the most recently used, and is not evicted as idle ahead of older ones.
func TestEarlierClockKeepsOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New[int](10, time.Minute)
	c.Add("old", 1, t0)
	c.Add("new", 2, t0.Add(30*time.Second))
	c.Add("late", 3, t0.Add(time.Second)) // its clock was read early
	c.Touch("old", t0)                    // so was this one's
	// At t0+61s nothing is idle: every entry counts as used at t0+30s or
	// after.
	if got := c.Evict(t0.Add(61*time.Second), always); len(got) != 0 {
		t.Errorf("evicted %v; want none", got)
	}
	// Past the size bound, the least recently used goes first, "new",
	// and then nothing more: "late" and "old", stamped t0+30s, are not
	// idle (stamped with their own clocks, they would be, and would go).
	c.max = 2
	if got := c.Evict(t0.Add(61*time.Second), always); !slices.Equal(got, []int{2}) {
		t.Errorf("over the bound: evicted %v, want [2]", got)
	}
}
