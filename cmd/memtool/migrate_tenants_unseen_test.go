package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// TestMigrateAllTenantsRefusesUnseenTenantEntries: the tenants directory
// of a directory store may hold what the file store does not list as a
// tenant: a directory whose name is no tenant ID (made by hand, or by
// other tools), a symbolic link to a tenant's directory kept elsewhere,
// a file. migrate --all-tenants copied the tenants listed and reported
// success, leaving those behind without a word; it refuses, naming each,
// and writes nothing, as it does for such entries in a memory.
func TestMigrateAllTenantsRefusesUnseenTenantEntries(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "alice")
	tenants := filepath.Join(src, filestore.TenantsDir)
	elsewhere := filepath.Join(tmp, "carol")
	if err := os.MkdirAll(filepath.Join(tenants, "Bob"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		filepath.Join(tenants, "Bob", "b.md"): "bob's\n",
		filepath.Join(elsewhere, "c.md"):      "carol's\n",
		filepath.Join(tenants, "notes.txt"):   "a file\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(tenants, "carol")); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(tmp, "copy")
	out, stderr, code := runCLI(t, nil, "", "migrate", "--from", src, "--to", to, "--all-tenants")
	for _, want := range []string{`"Bob" (not a tenant ID)`, `"carol" (a symbolic link`, `"notes.txt" (not a directory)`, "holds 3 entries"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("migrate --all-tenants: stderr %q lacks %q", stderr, want)
		}
	}
	if code != exitFailed || out != "" {
		t.Errorf("migrate --all-tenants: exit %d, stdout %q; want it refused (exit %d)", code, out, exitFailed)
	}
	if _, err := os.Stat(to); err == nil {
		t.Errorf("the refused migrate made the target")
	}
	// One tenant named alone is copied: what lies beside it is not asked for.
	mustRunCLI(t, nil, "", "migrate", "--from", src, "--to", to, "--tenant", "alice")
	// Once they are out of the way, every tenant is copied.
	for _, name := range []string{"Bob", "carol", "notes.txt"} {
		if err := os.RemoveAll(filepath.Join(tenants, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustRunCLI(t, nil, "", "migrate", "--from", src, "--to", filepath.Join(tmp, "all"), "--all-tenants")
}

// TestMigrateAllTenantsForceNamesOtherTenants: --force deletes nothing,
// and the summary names what the target holds that the source has not
// (README). migrate --all-tenants --force named the extra entries of the
// tenants it copied into, but said nothing of a whole tenant of the
// target that the source has not, which stays there.
func TestMigrateAllTenantsForceNamesOtherTenants(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "alice")
	for _, dst := range []string{filepath.Join(tmp, "dst"), "sqlite://" + filepath.Join(tmp, "dst.db")} {
		if err := openTestStore(t, dst, "zed").WriteFile(context.Background(), "z.md", []byte("zed's"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		out := migrateOK(t, "--from", src, "--to", dst, "--all-tenants", "--force")
		if !strings.Contains(out, "the target also holds") || !strings.Contains(out, "tenant zed") {
			t.Errorf("migrate --all-tenants --force into %s, which holds tenant zed: summary %q does not name tenant zed", dst, out)
		}
		checkTenantFile(t, dst, "zed", "z.md", "zed's")
	}
}

// checkTenantFile fails t unless the file name of tenant in the store at
// url holds want.
func checkTenantFile(t *testing.T, url, tenant, name, want string) {
	t.Helper()
	if data, err := openTestStore(t, url, tenant).ReadFile(context.Background(), name, 1<<20); err != nil || string(data) != want {
		t.Errorf("%s tenant %s %s: %q, %v; want %q", url, tenant, name, data, err, want)
	}
}
