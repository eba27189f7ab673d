package filestore

import (
	"testing"
	"time"
)

// TestFlockPauses: a waiter for another process's flock never sleeps
// longer than maxFlockPause between tries, however long it has waited.
func TestFlockPauses(t *testing.T) {
	pause := minFlockPause
	for range 64 {
		pause = nextFlockPause(pause)
		if pause > time.Millisecond || pause < minFlockPause {
			t.Fatalf("pause %v, want between %v and 1ms", pause, minFlockPause)
		}
	}
	if pause != time.Millisecond {
		t.Errorf("pauses settle at %v, want 1ms", pause)
	}
}
