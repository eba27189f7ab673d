package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogOutcomeUnknown: --outcome unknown (a change whose answer was
// lost, see audit.Outcome) is an outcome package audit logs, so it
// selects those entries rather than being refused as a typo.
func TestLogOutcomeUnknown(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "audit.jsonl")
	log := `{"time":"2026-11-30T04:11:11Z","op":"create","path":"/memories/a.md","outcome":"unknown","bytes":4,"duration_us":9}
{"time":"2026-11-30T04:11:12Z","op":"create","path":"/memories/b.md","outcome":"ok","bytes":4,"duration_us":9}
`
	if err := os.WriteFile(name, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runBinary(t, "", "log", "--outcome", "unknown", name)
	if code != 0 || stderr != "" || strings.Count(out, "\n") != 1 || !strings.Contains(out, "/memories/a.md\tunknown") {
		t.Errorf("exit %d, stderr %q, out %q", code, stderr, out)
	}
}
