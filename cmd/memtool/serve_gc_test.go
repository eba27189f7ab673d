package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// memtool serve keeps a floor under its heap (internal/gcfloor): while
// its heap is small, its GC percent (go_gc_gogc_percent at /metrics) is
// above the default; GOGC or GOMEMLIMIT in its environment win.
func TestServeGCFloor(t *testing.T) {
	for _, c := range []struct {
		gogc, memlimit string
		above          bool // the percent is above 100; else it is 100
	}{
		{"", "", true},
		{"100", "", false},
		{"", "1GiB", false},
	} {
		t.Run("GOGC="+c.gogc+",GOMEMLIMIT="+c.memlimit, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			t.Setenv("GOMEMLIMIT", c.memlimit)
			p := startServe(t, plainBinary(t), filepath.Join(t.TempDir(), "store"))
			status, body := request(t, "GET", p.url, "/metrics", "", "")
			if status != 200 {
				t.Fatalf("GET /metrics: %d %s", status, body)
			}
			var percent float64 = -1
			for line := range strings.Lines(body) {
				if v, ok := strings.CutPrefix(line, "go_gc_gogc_percent "); ok {
					percent, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
				}
			}
			switch {
			case percent < 0:
				t.Fatalf("no go_gc_gogc_percent in /metrics:\n%s", body)
			case c.above && percent <= 100:
				t.Errorf("go_gc_gogc_percent %v, want above 100 (the floor)", percent)
			case !c.above && percent != 100:
				t.Errorf("go_gc_gogc_percent %v, want 100 (the environment's)", percent)
			}
		})
	}
}
