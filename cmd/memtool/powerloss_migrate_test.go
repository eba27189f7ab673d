//go:build linux

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
)

// TestPowerLossAfterMigrateAllTenants loses the power right after memtool
// migrate --all-tenants has said it is done, to a new directory and to a
// new SQLite file on the same file system, and again after a migrate
// --force that replaced a file of the copy: every tenant's files are
// there with the content copied last, and the API key copied with them
// opens.
func TestPowerLossAfterMigrateAllTenants(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		from := filepath.Join(p.Dir, "src")
		write := func(url, tenant, path, text string) {
			t.Helper()
			if _, stderr, code := runBuild(t, plainBinary(t), childEnv(), "", "create", "--overwrite", "--store", url, "--tenant", tenant, "--text", text, path); code != 0 {
				t.Fatalf("create %s: exit %d: %s", path, code, stderr)
			}
		}
		want := map[string]map[string]string{
			"alice": {"/memories/a/notes.md": "of alice\n", "/memories/top.md": "alice's top\n"},
			"bob":   {"/memories/b/c/deep.md": "of bob\n"},
		}
		for tenant, files := range want {
			for path, text := range files {
				write(from, tenant, path, text)
			}
		}
		token := addKey(t, from, "alice", "write")
		migrate := func(to string, force bool) {
			t.Helper()
			args := []string{"migrate", "--from", from, "--to", to, "--all-tenants"}
			if force {
				args = append(args, "--force")
			}
			if _, stderr, code := runBuild(t, plainBinary(t), childEnv(), "", args...); code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
		}
		check := func(to string) {
			t.Helper()
			for tenant, files := range want {
				for path, text := range files {
					if out, stderr, code := runBuild(t, plainBinary(t), childEnv(), "", "view", "--store", to, "--tenant", tenant, path); code != 0 || !strings.Contains(out, text) {
						t.Errorf("%s: after the power loss, %s of %s: exit %d, %q, %q; want %q", to, path, tenant, code, out, stderr, text)
					}
				}
			}
			ring, err := keys.Open(context.Background(), to, nil)
			if err != nil {
				t.Fatalf("%s: after the power loss, the key ring: %v", to, err)
			}
			defer ring.Close()
			if _, err := ring.Verify(context.Background(), token); err != nil {
				t.Errorf("%s: after the power loss, the API key copied does not open: %v", to, err)
			}
		}
		targets := []string{filepath.Join(p.Dir, "dst"), "sqlite://" + filepath.Join(p.Dir, "dst.db")}
		for _, to := range targets {
			migrate(to, false)
		}
		p.Crash()
		for _, to := range targets {
			check(to)
		}
		want["alice"]["/memories/top.md"] = "alice's new top\n"
		write(from, "alice", "/memories/top.md", want["alice"]["/memories/top.md"])
		for _, to := range targets {
			migrate(to, true)
		}
		p.Crash()
		for _, to := range targets {
			check(to)
		}
	})
}
