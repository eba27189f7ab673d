package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The commands that only look at a store (info, history, diff, restore
// --list) record no policy in it, as gc --dry-run records none: given a
// policy file, they check it against the store's record and leave the
// store as it was. Recording it would commit the store to the policy for
// good, so that every process without it (a plain memtool view) is
// refused from then on, by a command that only described the store.
func TestReadOnlyCommandsRecordNoPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy string
		args   []string
	}{
		{`{"history":{},"expiry":true}`, []string{"info"}},
		{`{"history":{},"expiry":true}`, []string{"history", "/memories/a.md"}},
		{`{"history":{}}`, []string{"diff", "/memories/a.md"}},
		{`{"history":{},"expiry":true}`, []string{"restore", "--list"}},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			dir := t.TempDir()
			store := filepath.Join(dir, "memories")
			mustRunCLI(t, nil, "", "create", "--store", store, "--text", "tea", "/memories/a.md")
			policy := filepath.Join(dir, "policy.json")
			if err := os.WriteFile(policy, []byte(c.policy), 0o600); err != nil {
				t.Fatal(err)
			}
			before := diskTree(t, store)
			args := append([]string{c.args[0], "--store", store}, c.args[1:]...)
			_, stderr, code := runCLI(t, map[string]string{"MEMTOOL_POLICY": policy}, "", args...)
			if code == exitStore {
				t.Fatalf("memtool %q: exit %d, %s", args, code, stderr)
			}
			if _, err := os.Stat(filepath.Join(store, recordName)); err == nil {
				t.Errorf("memtool %s wrote the policy record", c.args[0])
			}
			if after := diskTree(t, store); !slices.Equal(after, before) {
				t.Errorf("memtool %s changed the store: %q, was %q", c.args[0], after, before)
			}
			if _, stderr, code := runCLI(t, nil, "", "view", "--store", store, "/memories/a.md"); code != exitOK {
				t.Errorf("view without the policy after memtool %s: exit %d, %s", c.args[0], code, stderr)
			}
		})
	}
}
