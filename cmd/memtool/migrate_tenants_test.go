package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
)

// TestMigrateAllTenantsRefusesTargetWithOtherTenants: --all-tenants into
// a store that holds a tenant the source does not is refused without
// --force, as any target that holds something is: migrate once checked
// only the source's tenants in the target, copied, and reported success
// for a target that then held a tenant the source has not.
func TestMigrateAllTenantsRefusesTargetWithOtherTenants(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "alice")
	checkAllTenantsRefused(t, tmp, src, "carol", "of 1 tenant", "carol", "--force")
}

// TestMigrateAllTenantsRefusedClaimsNoTenant: --all-tenants refused for
// one tenant's target (not empty, without --force) leaves the target's
// tenants as they were: migrate once opened every tenant's target, which
// creates it, before it checked them, so that a refusal for bob left a
// new, empty tenant alice in the target.
func TestMigrateAllTenantsRefusedClaimsNoTenant(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "alice", "bob")
	checkAllTenantsRefused(t, tmp, src, "bob", "of 2 tenants", "(tenant bob): the target is not empty")
}

// checkAllTenantsRefused migrates every tenant of the store src into a
// directory and an SQLite store in tmp, each holding a file of tenant:
// without --force memtool must fail, saying each of refusal on stderr,
// and leave tenant the target's only tenant; with --force it must
// succeed, its summary saying forced.
func checkAllTenantsRefused(t *testing.T, tmp, src, tenant, forced string, refusal ...string) {
	t.Helper()
	ctx := context.Background()
	for _, dst := range []string{filepath.Join(tmp, "dst"), "sqlite://" + filepath.Join(tmp, "dst.db")} {
		if err := openTestStore(t, dst, tenant).WriteFile(ctx, tenant[:1]+".md", []byte(tenant+"'s"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runMigrateBinary(t, "--from", src, "--to", dst, "--all-tenants")
		if code != exitFailed || out != "" || slices.ContainsFunc(refusal, func(s string) bool { return !strings.Contains(stderr, s) }) {
			t.Errorf("migrate --all-tenants into %s holding tenant %s: exit %d\nstdout: %s\nstderr: %s", dst, tenant, code, out, stderr)
		}
		checkOnlyTenant(t, dst, tenant)
		if out := migrateOK(t, "--from", src, "--to", dst, "--all-tenants", "--force"); !strings.Contains(out, forced) {
			t.Errorf("with --force: %q", out)
		}
	}
}

// checkOnlyTenant fails t unless tenant is the only tenant of the store
// at url, as it was before a refused migration.
func checkOnlyTenant(t *testing.T, url, tenant string) {
	t.Helper()
	if ids, err := listTenants(context.Background(), url); err != nil || !slices.Equal(ids, []string{tenant}) {
		t.Errorf("the refused migration left the tenants %q (%v), want only %s", ids, err, tenant)
	}
}

// TestMigratePolicyMismatchRefusedBeforeCopying: a target whose recorded
// policies the source's would drop (here tenant bob of the target is
// encrypted, the source is not) is refused before anything is copied,
// as other refusals are: migrate once copied alice, then failed on bob's
// record, leaving a partial copy.
func TestMigratePolicyMismatchRefusedBeforeCopying(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "alice", "bob")
	dst := filepath.Join(tmp, "dst")
	key, _ := encrypt.NewKey("k1")
	env := policyEnv(t, `{"encrypt":true}`, key)
	if _, stderr, code := runMemtoolEnv(t, env, "create", "--store", dst, "--tenant", "bob", "--text", "sealed", "/memories/s.md"); code != 0 {
		t.Fatal(stderr)
	}
	out, stderr, code := runMigrateBinary(t, "--from", src, "--to", dst, "--all-tenants", "--force")
	if code != exitStore || out != "" || !strings.Contains(stderr, "it is encrypted") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	checkOnlyTenant(t, dst, "bob")
}
