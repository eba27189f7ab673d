package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// memtool rekey --all-tenants on a store where some tenants are not
// encrypted (bob2: written without any policy, so without a policy
// record; dave: with history alone, so his record says unencrypted)
// refuses before it changes anything, naming those tenants and why,
// and says how to go on. Before, it rekeyed the encrypted tenants and
// then failed on bob2's first file with "run memtool rekey again until it
// succeeds", which it never could, so the old keys could never be
// dropped; with dave too, it stopped at dave, the others rekeyed.
// rekey --tenant of an unencrypted tenant refuses the same way.
func TestRekeyAllTenantsWithPlainTenant(t *testing.T) {
	t.Parallel()
	dir, policy, _, env := rotatedTenants(t) // alice and bob, encrypted under "old"
	history := filepath.Join(t.TempDir(), "history.json")
	os.WriteFile(history, []byte(`{"history":{}}`), 0o600)
	for _, c := range [][]string{
		{"create", "--store", dir, "--tenant", "carol", "--policy", policy, "--text", "for carol", "/memories/a.md"},
		{"create", "--store", dir, "--tenant", "bob2", "--text", "plain for bob2", "/memories/a.md"},
		{"create", "--store", dir, "--tenant", "dave", "--policy", history, "--text", "plain for dave", "/memories/d/a.md"},
	} {
		if out, stderr, code := runMemtoolEnv(t, env, c...); code != 0 {
			t.Fatalf("%v: exit %d, %q, %q", c, code, out, stderr)
		}
	}
	before := diskTree(t, dir)

	out, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir, "--all-tenants")
	if code != exitStore || out != "" {
		t.Errorf("rekey --all-tenants: exit %d, stdout %q; want exit %d and nothing re-encrypted", code, out, exitStore)
	}
	for _, want := range []string{
		"tenant bob2 is not encrypted: it holds unencrypted files (such as /memories/a.md)",
		"tenant dave is not encrypted: its policy record says so",
		"memtool rekey does not encrypt a memory in place",
		"Nothing was changed",
		"memtool migrate",
		"--tenant",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("rekey --all-tenants says %q; want it to say %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "again until it succeeds") {
		t.Errorf("rekey --all-tenants tells to run it again, which cannot succeed: %q", stderr)
	}
	if after := diskTree(t, dir); !slices.Equal(after, before) {
		t.Errorf("the store changed:\n%v\nwant\n%v", after, before)
	}

	for _, tenant := range []string{"bob2", "dave"} {
		out, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir, "--tenant", tenant)
		if code != exitStore || out != "" || !strings.Contains(stderr, "tenant "+tenant+" is not encrypted") || strings.Contains(stderr, "again until it succeeds") {
			t.Errorf("rekey --tenant %s: exit %d, %q, %q", tenant, code, out, stderr)
		}
	}
	if after := diskTree(t, dir); !slices.Equal(after, before) {
		t.Errorf("the store changed:\n%v\nwant\n%v", after, before)
	}
}
