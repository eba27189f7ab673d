package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/storeurl"
)

// TestPolicyStackGCFull runs gc and restore on an SQLite store under every
// policy a policy file turns on: gc expires through encryption, the audit
// log records the move, the history of the expired file stays, and
// restore goes through limits (refused while the memory is full, the file
// staying in the trash) and then through everything once there is room.
func TestPolicyStackGCFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := "sqlite://" + filepath.Join(dir, "m.db")
	key, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(dir, "audit.jsonl")
	policy := writePolicy(t, `{"limits":{"max_files":2,"max_bytes":100},"secrets":"reject","audit":"`+auditLog+`","encrypt":true,"expiry":true,"history":{}}`)
	env := []string{"MEMTOOL_KEY=" + key.Text()}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runMemtoolEnv(t, env, append(args, "--store", url, "--policy", policy)...)
	}
	for _, c := range [][]string{
		{"create", "--text", "old one", "/memories/old.md"},
		{"str_replace", "--old", "one", "--new", "two", "/memories/old.md"},
		{"create", "--text", "new", "/memories/new.md"},
	} {
		if _, stderr, code := run(c...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c, code, stderr)
		}
	}
	// Age old.md in the (encrypted) access index.
	raw, closer, err := storeurl.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := encrypt.New(raw, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	index, _ := json.Marshal(map[string]any{"version": 1, "access": map[string]int64{"old.md": now - 40*24*3600, "new.md": now}})
	if err := sealed.WriteFile(t.Context(), ".memtool-expiry.json", index, memtool.Replace); err != nil {
		t.Fatal(err)
	}
	closer.Close()

	if out, stderr, code := run("gc", "--unused-for", "30d"); code != 0 || !strings.Contains(out, "expired /memories/old.md") {
		t.Fatalf("gc: exit %d, %q, %q", code, out, stderr)
	}
	if out, stderr, code := run("history", "/memories/old.md"); code != 0 || !strings.Contains(out, "1\t") {
		t.Errorf("history of the expired file: exit %d, %q, %q", code, out, stderr)
	}
	log, _ := os.ReadFile(auditLog)
	if !strings.Contains(string(log), `"path":"/memories/old.md"`) || strings.Count(string(log), "\n") < 4 {
		t.Errorf("audit log after gc:\n%s", log)
	}
	// Full again: restore is refused by limits and the file stays in the trash.
	if _, stderr, code := run("create", "--text", "other", "/memories/other.md"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run("restore", "/memories/old.md"); code == 0 || !strings.Contains(stderr, "Limit exceeded") {
		t.Errorf("restore past max_files: exit %d, %q", code, stderr)
	}
	if out, _, _ := run("restore", "--list"); !strings.Contains(out, "/memories/old.md") {
		t.Errorf("the refused restore left the trash: %q", out)
	}
	if _, stderr, code := run("delete", "/memories/other.md"); code != 0 {
		t.Fatalf("delete: exit %d: %s", code, stderr)
	}
	if out, stderr, code := run("restore", "/memories/old.md"); code != 0 || stderr != "" {
		t.Errorf("restore: exit %d, %q, %q", code, out, stderr)
	}
	if out, _, _ := run("view", "/memories/old.md"); !strings.Contains(out, "old two") {
		t.Errorf("restored file reads %q", out)
	}
	if out, _, _ := run("restore", "--list"); strings.Contains(out, "/memories/old.md") {
		t.Errorf("restored file still in the trash: %q", out)
	}
}
