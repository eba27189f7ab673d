package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// TestRekeyOneTenantKeepsOldKeys: rekey --tenant re-encrypts that tenant
// alone, so it must not say the old keys can be removed: the other
// tenants' files are still under them, and dropping the old key as told
// leaves those files unreadable. It says to run rekey --all-tenants first.
func TestRekeyOneTenantKeepsOldKeys(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	keyFile := filepath.Join(t.TempDir(), "keys")
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"encrypt":true}`), 0o600)
	oldKey, _ := encrypt.NewKey("old")
	os.WriteFile(keyFile, []byte(oldKey.Text()+"\n"), 0o600)
	env := []string{"MEMTOOL_KEY_FILE=" + keyFile}
	for _, tenant := range []string{"alice", "bob"} {
		if out, stderr, code := runMemtoolEnv(t, env, "create", "--store", dir, "--tenant", tenant, "--policy", policy, "--text", "for "+tenant, "/memories/a.md"); code != 0 {
			t.Fatalf("create for %s: exit %d, %q, %q", tenant, code, out, stderr)
		}
	}
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", keyFile); code != 0 {
		t.Fatalf("keygen --rotate: %d %s", code, stderr)
	}
	out, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir, "--tenant", "alice")
	if code != 0 || out != "re-encrypted 1 file with key new\n" {
		t.Fatalf("rekey --tenant alice: exit %d, %q, %q", code, out, stderr)
	}
	if strings.Contains(stderr, "can be removed") || !strings.Contains(stderr, "--all-tenants") || !strings.Contains(stderr, "tenant alice") {
		t.Errorf("rekey --tenant alice, with bob's file still under key old, says: %q; want no word of removing the old keys, and --all-tenants", stderr)
	}
	// What it says holds: bob's file still needs the old key.
	newOnly, _ := encrypt.ParseKeys(readDisk(t, keyFile))
	os.WriteFile(keyFile, []byte(newOnly[0].Text()+"\n"), 0o600)
	if out, _, code := runMemtoolEnv(t, env, "view", "--store", dir, "--tenant", "bob", "--policy", policy, "/memories/a.md"); code == 0 {
		t.Errorf("bob's file opened with the new key alone after rekey --tenant alice: %q", out)
	}
}
