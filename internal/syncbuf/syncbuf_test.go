package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writers and a reader (run with -race): every write is kept
// whole, and Len and String agree once the writers are done.
func TestConcurrentUse(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.Len()
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got, want := b.String(), strings.Repeat("line\n", 800); got != want {
		t.Errorf("the buffer holds %d bytes, want %d: every line whole", len(got), len(want))
	}
	if b.Len() != len(b.String()) {
		t.Errorf("Len %d, String holds %d bytes", b.Len(), len(b.String()))
	}
}
