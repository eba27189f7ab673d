package main

import (
	"os"
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
	dir, policy, keyFile, env := rotatedTenants(t)
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
