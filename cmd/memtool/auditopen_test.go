package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyAuditLogUnopenableCreatesNoStore: a policy whose audit log
// cannot be opened (its directory is missing) fails the command before
// the store opens, as a bad policy file or a missing key does: no store
// is created, and no policy is recorded in it. It was found only after
// the store was made and the policy's history recorded, so that a typo
// in the log's path left a new store that every process must open with
// history from then on, from a command that said it could not open it.
func TestPolicyAuditLogUnopenableCreatesNoStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	logName := filepath.Join(dir, "no-such-dir", "audit.jsonl")
	if err := os.WriteFile(policy, []byte(`{"history":{},"expiry":true,"audit":"`+logName+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "memories")
	for _, args := range [][]string{
		{"exec", "--store", store, "--policy", policy},
		{"create", "--store", store, "--policy", policy, "--text", "x", "/memories/a.md"},
	} {
		_, errOut, code := runCLI(t, nil, `{"command":"create","path":"/memories/a.md","file_text":"x"}`+"\n", args...)
		if code != exitStore || !strings.Contains(errOut, "audit log") {
			t.Errorf("memtool %s: exit %d, stderr %q; want exit %d and the audit log named", args[0], code, errOut, exitStore)
		}
		if _, err := os.Stat(store); !os.IsNotExist(err) {
			entries, _ := os.ReadDir(store)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("memtool %s failed on the audit log, and left the store %v", args[0], names)
		}
	}
}
