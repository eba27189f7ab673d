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
	ctx := context.Background()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	seedTree(t, src, "alice")
	for _, dst := range []string{filepath.Join(tmp, "dst"), "sqlite://" + filepath.Join(tmp, "dst.db")} {
		if err := openTestStore(t, dst, "carol").WriteFile(ctx, "c.md", []byte("carol's"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runMigrateBinary(t, "--from", src, "--to", dst, "--all-tenants")
		if code != exitFailed || out != "" || !strings.Contains(stderr, "carol") || !strings.Contains(stderr, "--force") {
			t.Errorf("migrate --all-tenants into %s holding tenant carol: exit %d\nstdout: %s\nstderr: %s", dst, code, out, stderr)
		}
		ids, err := listTenants(ctx, dst)
		if err != nil || !slices.Equal(ids, []string{"carol"}) {
			t.Errorf("the refused migration left the tenants %q (%v), want only carol", ids, err)
		}
		if out := migrateOK(t, "--from", src, "--to", dst, "--all-tenants", "--force"); !strings.Contains(out, "of 1 tenant") {
			t.Errorf("with --force: %q", out)
		}
	}
}

// TestMigrateAllTenantsRefusedClaimsNoTenant: --all-tenants refused for
// one tenant's target (not empty, without --force) leaves the target's
// tenants as they were: migrate once opened every tenant's target, which
// creates it, before it checked them, so that a refusal for bob left a
// new, empty tenant alice in the target.
func TestMigrateAllTenantsRefusedClaimsNoTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	seedTree(t, src, "alice")
	seedTree(t, src, "bob")
	for _, dst := range []string{filepath.Join(tmp, "dst"), "sqlite://" + filepath.Join(tmp, "dst.db")} {
		if err := openTestStore(t, dst, "bob").WriteFile(ctx, "b.md", []byte("bob's"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runMigrateBinary(t, "--from", src, "--to", dst, "--all-tenants")
		if code != exitFailed || out != "" || !strings.Contains(stderr, "(tenant bob): the target is not empty") {
			t.Errorf("migrate --all-tenants into %s holding bob: exit %d\nstdout: %s\nstderr: %s", dst, code, out, stderr)
		}
		if ids, err := listTenants(ctx, dst); err != nil || !slices.Equal(ids, []string{"bob"}) {
			t.Errorf("the refused migration left the tenants %q (%v), want only bob", ids, err)
		}
		if out := migrateOK(t, "--from", src, "--to", dst, "--all-tenants", "--force"); !strings.Contains(out, "of 2 tenants") {
			t.Errorf("with --force: %q", out)
		}
	}
}

// TestMigratePolicyMismatchRefusedBeforeCopying: a target whose recorded
// policies the source's would drop (here tenant bob of the target is
// encrypted, the source is not) is refused before anything is copied,
// as other refusals are: migrate once copied alice, then failed on bob's
// record, leaving a partial copy.
func TestMigratePolicyMismatchRefusedBeforeCopying(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	seedTree(t, src, "alice")
	seedTree(t, src, "bob")
	key, _ := encrypt.NewKey("k1")
	env := policyEnv(t, `{"encrypt":true}`, key)
	if _, stderr, code := runMemtoolEnv(t, env, "create", "--store", dst, "--tenant", "bob", "--text", "sealed", "/memories/s.md"); code != 0 {
		t.Fatal(stderr)
	}
	out, stderr, code := runMigrateBinary(t, "--from", src, "--to", dst, "--all-tenants", "--force")
	if code != exitStore || out != "" || !strings.Contains(stderr, "it is encrypted") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if ids, err := listTenants(context.Background(), dst); err != nil || !slices.Equal(ids, []string{"bob"}) {
		t.Errorf("the refused migration left the tenants %q (%v), want only bob", ids, err)
	}
}
