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

// TestEditOfMissingStoreCreatesNoStore: str_replace, insert, delete and
// rename need a file that is there, so on a store (or a tenant) that is
// not there yet they fail as on an empty one, with the model's error and
// exit status 1, and leave no new store behind. The audit policy still
// logs the refusal.
func TestEditOfMissingStoreCreatesNoStore(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"str_replace", "--old", "a", "/memories/a.md"},
		{"insert", "--text", "x", "/memories/a.md", "0"},
		{"delete", "/memories/a.md"},
		{"rename", "/memories/a.md", "/memories/b.md"},
	} {
		dir := t.TempDir()
		logDir := t.TempDir()
		auditLog := filepath.Join(logDir, "audit.jsonl")
		policy := filepath.Join(logDir, "p.json")
		if err := os.WriteFile(policy, []byte(`{"audit":"`+auditLog+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, store := range []string{filepath.Join(dir, "m"), "sqlite://" + filepath.Join(dir, "m.db")} {
			full := append([]string{args[0], "--store", store, "--policy", policy}, args[1:]...)
			_, stderr, code := runCLI(t, nil, "", full...)
			if code != exitFailed || !strings.Contains(stderr, "/memories/a.md does not exist") {
				t.Errorf("%q: exit %d, stderr %q; want 1 and the model's error", full, code, stderr)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%q: a failed command left %v", args, entries)
		}
		// (The audit policy logs no entry for a delete or rename of a
		// missing file on any store.)
		if b, _ := os.ReadFile(auditLog); (args[0] == "insert" || args[0] == "str_replace") && strings.Count(string(b), "not_exist") < 2 {
			t.Errorf("%q: audit log %q", args, b)
		}
	}
	// A tenant that is not there is not created either.
	dir := filepath.Join(t.TempDir(), "m")
	mustRunCLI(t, nil, "", "create", "--store", dir, "--tenant", "t1", "--text", "a", "/memories/a.md")
	if _, stderr, code := runCLI(t, nil, "", "delete", "--store", dir, "--tenant", "t2", "/memories/a.md"); code != exitFailed || !strings.Contains(stderr, "does not exist") {
		t.Errorf("delete in a missing tenant: exit %d, %q", code, stderr)
	}
	if out := mustRunCLI(t, nil, "", "tenants", "--store", dir); out != "t1\n" {
		t.Errorf("tenants after a failed delete: %q", out)
	}
}

// A refused path is answered after the flags and the policy file are
// checked, as any other command's: a bad policy is still reported as one.
func TestRefusedPathStillChecksPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-policy.json")
	_, stderr, code := runCLI(t, nil, "", "create", "--store", filepath.Join(dir, "m"), "--policy", missing, "--text", "x", "/memories/../x")
	if code == exitOK || code == exitFailed || !strings.Contains(stderr, "no-such-policy.json") {
		t.Errorf("a refused path with a missing policy file: exit %d, stderr %q; want the policy's error", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}
