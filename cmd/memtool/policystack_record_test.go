package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// TestPolicyStackRecordNotCounted: the policy record memtool keeps beside
// a memory (.memtool-policy.json) is memtool's, not the model's: on a
// store that lists it (SQLite), it must count neither against the limits
// policy's max_files and max_bytes nor in memtool info's tally. It did: a
// policy of "max_files": 2 with history on let the model keep one file.
func TestPolicyStackRecordNotCounted(t *testing.T) {
	t.Parallel()
	key, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, policy string }{
		{"history", `{"limits":{"max_files":2,"max_bytes":20},"history":{}}`},
		{"expiry", `{"limits":{"max_files":2,"max_bytes":20},"expiry":true}`},
		{"encrypt", `{"limits":{"max_files":2,"max_bytes":20},"encrypt":true}`},
		{"all", `{"limits":{"max_files":2,"max_bytes":20},"encrypt":true,"expiry":true,"history":{},"secrets":"reject"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := "sqlite://" + filepath.Join(t.TempDir(), "m.db")
			policy := writePolicy(t, c.policy)
			env := []string{"MEMTOOL_KEY=" + key.Text()}
			run := func(args ...string) (string, string, int) {
				t.Helper()
				return runMemtoolEnv(t, env, append(args, "--store", url, "--policy", policy)...)
			}
			for _, p := range []string{"/memories/a.md", "/memories/b.md"} {
				if _, stderr, code := run("create", "--text", "0123456789", p); code != 0 {
					t.Fatalf("create %s: exit %d: %s", p, code, stderr)
				}
			}
			if _, stderr, code := run("create", "--text", "x", "/memories/c.md"); code == 0 || !strings.Contains(stderr, "Limit exceeded") {
				t.Errorf("a third file past max_files 2: exit %d, %q", code, stderr)
			}
			out, stderr, code := run("info")
			if code != 0 || !strings.Contains(out, "memory:     2 files, 0 directories, 20 bytes") {
				t.Errorf("info: exit %d, %q, %q", code, out, stderr)
			}
		})
	}
}
