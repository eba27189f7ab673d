package pgstore

import (
	"context"
	"testing"
	"time"
)

// A free turn is taken however short the timeout, even once it has run
// out: a select between a free turn and a timer that has fired picks
// either, and answered ErrBusy with no other write in the process (seen
// in CI under load with a LockTimeout of 300µs).
func TestGateFreeTurnIsTaken(t *testing.T) {
	var g gates
	for i := range 500 {
		leave, err := g.enter(context.Background(), "t", time.Nanosecond)
		if err != nil {
			t.Fatalf("enter %d on a free gate: %v", i, err)
		}
		leave()
	}
}
