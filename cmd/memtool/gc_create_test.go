package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGCCreatesNoStore: gc with the expiry policy on a store that is not
// there (a mistyped --store in a cron job) created an empty store there,
// recorded the policy in it and said "nothing to expire or purge", exit
// 0, at every run, while the real store was never collected; with a
// mistyped --tenant it created that tenant. A store or tenant that is not
// there has nothing to collect: gc says so (exit 3) and creates nothing,
// as the commands that only read do.
func TestGCCreatesNoStore(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"expiry":true}`)}
	typo := filepath.Join(tmp, "typo")
	if out, stderr, code := runCLI(t, vars, "", "gc", "--store", typo, "--unused-for", "30d"); code != exitStore || out != "" {
		t.Errorf("gc on a store that is not there: exit %d, stdout %q, stderr %q; want exit %d", code, out, stderr, exitStore)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Errorf("gc created the store %s", typo)
	}
	db := "sqlite://" + filepath.Join(tmp, "m.db")
	mustRunCLI(t, vars, "", "create", "--store", db, "--tenant", "alice", "--text", "x", "/memories/a.md")
	if out, stderr, code := runCLI(t, vars, "", "gc", "--store", db, "--tenant", "alicee", "--unused-for", "30d"); code != exitStore || out != "" {
		t.Errorf("gc of a tenant that is not there: exit %d, stdout %q, stderr %q; want exit %d", code, out, stderr, exitStore)
	}
	if got := strings.Fields(mustRunCLI(t, nil, "", "tenants", "--store", db)); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("after gc of tenant alicee, the tenants are %q", got)
	}
	// The store that is there is collected as before.
	if _, stderr, code := runCLI(t, vars, "", "gc", "--store", db, "--tenant", "alice", "--unused-for", "30d"); code != exitOK || !strings.Contains(stderr, "nothing to expire") {
		t.Errorf("gc of tenant alice: exit %d, %q", code, stderr)
	}
}
