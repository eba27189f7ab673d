package server

import (
	"testing"
	"time"
)

// A limiter is kept at least as long as it takes to refill: dropping it
// earlier would hand its client a full burst again. A refill longer than
// a time.Duration holds used to overflow into a negative idle time, and
// the limiter was dropped after 10 minutes.
func TestLimiterIdleCoversTheRefill(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		burst int
		want  time.Duration
	}{
		{1, 20, 10 * time.Minute},
		{0.001, 3, 3000 * time.Second},
		{1e-9, 20, time.Duration(1<<63 - 1)},
		{1e-12, 1, time.Duration(1<<63 - 1)},
	} {
		if got := limiterIdle(c.rate, c.burst); got < c.want {
			t.Errorf("limiterIdle(%g, %d) = %v, want at least %v", c.rate, c.burst, got, c.want)
		}
	}
}
