package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedPathCreatesNoStore: a write command whose path the gate
// refuses fails (exit status 1, the model's error text) and changes
// nothing: it does not leave a new, empty store behind, neither a
// directory nor a SQLite file, and writes no policy record.
func TestRefusedPathCreatesNoStore(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"create", "--text", "x", "/memories/../x"},
		{"create", "--text", "x", "/etc/passwd"},
		{"str_replace", "--old", "a", "/memories/a\x1b[2J"},
		{"insert", "--text", "x", "/memories/../../x", "0"},
		{"delete", "/memories/.."},
		{"rename", "/memories/a", "/memories/../b"},
		{"rename", "/tmp/a", "/memories/b"},
	} {
		dir := t.TempDir()
		for _, store := range []string{filepath.Join(dir, "m"), "sqlite://" + filepath.Join(dir, "m.db")} {
			full := append([]string{args[0], "--store", store}, args[1:]...)
			_, stderr, code := runCLI(t, nil, "", full...)
			if code != exitFailed || !strings.HasPrefix(stderr, "Error: ") || !strings.Contains(stderr, "Path") {
				t.Errorf("%q: exit %d, stderr %q; want 1 and the gate's error", full, code, stderr)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%q: a refused command left %v", args, entries)
		}
	}
}
