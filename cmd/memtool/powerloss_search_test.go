//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPowerLossSearchIndex loses the power right after a create and an
// edit on a SQLite file, whose search index is kept in the file beside
// the text: after it, memtool search finds the file by the text the edit
// put in and no longer by the text it took out, as a scan would.
func TestPowerLossSearchIndex(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 32<<20, func(t *testing.T, p powerLoss) {
		url := "sqlite://" + filepath.Join(p.Dir, "memory.db")
		run := func(args ...string) (string, int) {
			t.Helper()
			out, stderr, code := runBuild(t, plainBinary(t), childEnv(), "", append(args, "--store", url)...)
			if code > 1 {
				t.Fatalf("memtool %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			return out, code
		}
		run("create", "--text", "first zebracorn line\n", "/memories/d/notes.md")
		run("str_replace", "--old", "zebracorn", "--new", "quokkafish", "/memories/d/notes.md")
		p.Crash()
		if out, code := run("search", "quokkafish"); code != 0 || !strings.Contains(out, "/memories/d/notes.md:1:first quokkafish line") {
			t.Errorf("after the power loss, search for the new text: exit %d, %q", code, out)
		}
		if out, code := run("search", "zebracorn"); code != 1 {
			t.Errorf("after the power loss, search for the old text: exit %d, %q", code, out)
		}
	})
}
