package tenantlock

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestGet: a tenant's stores share one value while any holds it; another
// tenant has its own; an entry no store holds goes.
func TestGet(t *testing.T) {
	l := New[sync.Mutex]()
	a, a2, b := l.Get("alice"), l.Get("alice"), l.Get("bob")
	if a != a2 {
		t.Error("two Gets of one tenant gave two values")
	}
	if a == b {
		t.Error("two tenants share a value")
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(a2)
	runtime.KeepAlive(b)
	a, a2, b = nil, nil, nil
	for deadline := time.Now().Add(10 * time.Second); l.len() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries stay with no store holding them", l.len())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}
