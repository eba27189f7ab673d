package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadPolicyCreatesNothing checks that a command that may create its
// store (exec, create) leaves none behind when it is refused for its
// policy: a policy file that does not parse, or an encrypting policy
// without $MEMTOOL_KEY. Both are found before the store is opened.
func TestBadPolicyCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	encrypting := filepath.Join(dir, "encrypt.json")
	if err := os.WriteFile(bad, []byte(`{"limits":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(encrypting, []byte(`{"encrypt":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{bad, encrypting} {
		for _, url := range []string{filepath.Join(dir, "memories"), "sqlite://" + filepath.Join(dir, "m.db")} {
			for _, args := range [][]string{
				{"exec", "--store", url, "--policy", policy},
				{"create", "--store", url, "--policy", policy, "--text", "x", "/memories/a.md"},
			} {
				_, errOut, code := runCLI(t, nil, `{"command":"view","path":"/memories"}`, args...)
				if code != exitStore || !strings.Contains(errOut, "policy") && !strings.Contains(errOut, "MEMTOOL_KEY") {
					t.Errorf("memtool %s: exit %d, %q; want %d", strings.Join(args, " "), code, errOut, exitStore)
				}
				left, _ := filepath.Glob(filepath.Join(dir, "m*"))
				if len(left) != 0 {
					t.Errorf("memtool %s left %v", strings.Join(args, " "), left)
				}
				for _, f := range left {
					os.RemoveAll(f)
				}
			}
		}
	}
}

// TestBadTenantCreatesNothing checks that exec, create and init refuse an
// invalid --tenant (exit status 3, as for a store that has no such
// tenant) before they open the store: no directory or SQLite file is made.
func TestBadTenantCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, url := range []string{filepath.Join(dir, "memories"), "sqlite://" + filepath.Join(dir, "m.db")} {
		for _, tenant := range []string{"../x", "Bob", ""} {
			if tenant == "" {
				tenant = strings.Repeat("a", 65)
			}
			for _, args := range [][]string{
				{"exec", "--store", url, "--tenant", tenant},
				{"create", "--store", url, "--tenant", tenant, "--text", "x", "/memories/a.md"},
				{"init", "--template", "dev", "--store", url, "--tenant", tenant},
			} {
				_, errOut, code := runCLI(t, nil, `{"command":"view","path":"/memories"}`, args...)
				if code != exitStore || !strings.Contains(errOut, "invalid tenant id") {
					t.Errorf("memtool %s: exit %d, %q; want %d", strings.Join(args, " "), code, errOut, exitStore)
				}
				left, _ := filepath.Glob(filepath.Join(dir, "m*"))
				if len(left) != 0 {
					t.Errorf("memtool %s left %v", strings.Join(args, " "), left)
				}
				for _, f := range left {
					os.RemoveAll(f)
				}
			}
		}
	}
}
