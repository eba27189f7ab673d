package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// rotatedTenants makes a directory store whose tenants alice and bob each
// hold /memories/a.md, encrypted with the key "old" of a key file that
// keygen --rotate then put the key "new" first in; it returns the store,
// its policy file, the key file and the environment that names it.
func rotatedTenants(t *testing.T) (dir, policy, keyFile string, env []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "memories")
	keyFile = filepath.Join(t.TempDir(), "keys")
	policy = filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"encrypt":true}`), 0o600)
	oldKey, _ := encrypt.NewKey("old")
	os.WriteFile(keyFile, []byte(oldKey.Text()+"\n"), 0o600)
	env = []string{"MEMTOOL_KEY_FILE=" + keyFile}
	for _, tenant := range []string{"alice", "bob"} {
		if out, stderr, code := runMemtoolEnv(t, env, "create", "--store", dir, "--tenant", tenant, "--policy", policy, "--text", "for "+tenant, "/memories/a.md"); code != 0 {
			t.Fatalf("create for %s: exit %d, %q, %q", tenant, code, out, stderr)
		}
	}
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", keyFile); code != 0 {
		t.Fatalf("keygen --rotate: %d %s", code, stderr)
	}
	return dir, policy, keyFile, env
}

// rekey --all-tenants re-encrypts every tenant of a multi-tenant store
// (without it, the store's root refuses: name a tenant), after which each
// tenant's files open with the new key alone.
func TestRekeyAllTenants(t *testing.T) {
	t.Parallel()
	dir, policy, keyFile, env := rotatedTenants(t)
	out, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir, "--all-tenants")
	want := "re-encrypted 1 file of tenant alice with key new\nre-encrypted 1 file of tenant bob with key new\n"
	if code != 0 || out != want || !strings.Contains(stderr, "can be removed") {
		t.Fatalf("rekey --all-tenants: exit %d, %q, %q; want %q", code, out, stderr, want)
	}
	keys, _ := encrypt.ParseKeys(readDisk(t, keyFile))
	os.WriteFile(keyFile, []byte(keys[0].Text()+"\n"), 0o600) // the old key goes
	for _, tenant := range []string{"alice", "bob"} {
		out, stderr, code := runMemtoolEnv(t, env, "view", "--store", dir, "--tenant", tenant, "--policy", policy, "/memories/a.md")
		if code != 0 || !strings.Contains(out, "for "+tenant) {
			t.Errorf("view for %s with the new key alone: exit %d, %q, %q", tenant, code, out, stderr)
		}
	}
	if _, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir, "--all-tenants", "--tenant", "alice"); code != exitUsage || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("rekey --all-tenants --tenant: exit %d, %q", code, stderr)
	}
}
