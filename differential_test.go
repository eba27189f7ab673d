package memtool_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferentialBattery replays testdata/differential, the cases found
// by running random command sequences through the TS SDK 1.14.0 handler
// (the reference oracle) and through memtool, as TestReferenceBattery
// replays the reference battery; ts-expected.jsonl is the oracle's
// recording (LC_ALL=C, on ext4).
func TestDifferentialBattery(t *testing.T) {
	replayBattery(t, filepath.Join("testdata", "differential"), "")
}

// DEVIATIONS.md's table numbers its rows D1, D2, … without a gap, and its
// last is lastDeviation, the last id a battery line may name.
func TestDeviationIDs(t *testing.T) {
	data, err := os.ReadFile("DEVIATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| D") {
			n++
			if want := fmt.Sprintf("| D%d |", n); !strings.HasPrefix(line, want) {
				t.Fatalf("DEVIATIONS.md: row %d starts %.12q, want %q", n, line, want)
			}
		}
	}
	if n != lastDeviation {
		t.Errorf("DEVIATIONS.md has rows D1 to D%d, but lastDeviation is %d", n, lastDeviation)
	}
}
