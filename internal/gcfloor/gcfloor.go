// Package gcfloor keeps Go's garbage collector from running while a
// long-lived process's heap is small.
//
// With the default GOGC of 100, the collector runs each time the heap has
// grown by as much as was live after the last collection. A server whose
// live heap is a few megabytes (memtool serve on a database store keeps
// no memory in the process) then collects every few hundred requests, and
// each collection scans every goroutine's stack: under load, a quarter of
// memtool serve's CPU went to the collector. With a floor, the collector
// waits until the heap reaches the floor, or twice what was live (GOGC's
// 100), whichever is larger: a heap past the floor is collected as with
// the default, and one below it costs at most the floor in memory.
//
// A GOGC or GOMEMLIMIT set in the environment is the operator's choice:
// Start then changes nothing.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the heap size memtool serve lets its heap reach before
// the collector runs. Under bench/serve's load on memstore, 32 MiB gave
// about what 64 MiB did (8,000 requests/s against 5,900 without a floor)
// for a peak RSS of 61 MB instead of 96 (31 MB without).
const DefaultFloor = 32 << 20

var (
	mu      sync.Mutex
	floor   uint64 // 0: stopped
	started uint64 // the generation of the sentinels that may re-arm
)

// Start sets the floor, and keeps it set after every collection. It does
// nothing, and returns false, if GOGC or GOMEMLIMIT is set in the
// environment.
func Start(bytes uint64) bool {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	mu.Lock()
	floor = bytes
	started++
	gen := started
	mu.Unlock()
	tune()
	arm(gen)
	return true
}

// Stop gives the collector its default pace (GOGC 100) back.
func Stop() {
	mu.Lock()
	floor = 0
	started++
	mu.Unlock()
	debug.SetGCPercent(100)
}

// sentinel is garbage as soon as it is made: its finalizer runs after the
// next collection, tunes, and makes the next sentinel. It holds a pointer
// and more than 16 bytes, so that it never shares the tiny allocator's
// blocks with other objects, whose finalizers then might not run.
type sentinel struct {
	gen uint64
	_   *byte
	_   [16]byte
}

func arm(gen uint64) {
	s := &sentinel{gen: gen}
	runtime.SetFinalizer(s, func(s *sentinel) {
		mu.Lock()
		current := s.gen == started // else Start or Stop came since
		mu.Unlock()
		if current {
			tune()
			arm(s.gen)
		}
	})
}

// tune sets the GC percent so that the next collection comes when the
// heap reaches the floor, or twice the heap live after the last one.
func tune() {
	mu.Lock()
	f := floor
	mu.Unlock()
	if f == 0 {
		return
	}
	debug.SetGCPercent(Percent(f, liveHeap()))
}

// Percent is the GC percent that puts the next collection at the floor,
// for a heap of live bytes after the last one: never below 100 (the
// default). The runtime never collects a heap under 4 MiB × GOGC/100
// (its minimum goal), so the percent stays at most floor/4 MiB × 100:
// a larger one would pass the floor for a small live heap.
func Percent(floor, live uint64) int {
	most := max(100, int(floor/minHeap)*100)
	switch {
	case live == 0:
		return most
	case live >= floor/2:
		return 100
	}
	return min(most, int((floor-live)*100/live))
}

// minHeap is the runtime's minimum heap goal at GOGC 100.
const minHeap = 4 << 20

// liveHeap is the heap that the last collection found live (0 before the
// first, when the runtime counts the heap it started with).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
