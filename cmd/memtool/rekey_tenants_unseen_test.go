package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/filestore"
)

// TestRekeyAllTenantsRefusesUnseenTenantEntries: a tenant's directory
// kept elsewhere behind a symbolic link in .memtool-tenants is not a
// tenant the file store lists, so rekey --all-tenants never reached its
// files, still under the old key, and yet said the old keys could be
// removed: removing them then lost that tenant's files once its directory
// was put back. rekey refuses, naming it, and changes nothing.
func TestRekeyAllTenantsRefusesUnseenTenantEntries(t *testing.T) {
	t.Parallel()
	dir, _, _, env := rotatedTenants(t)
	bob := filepath.Join(dir, filestore.TenantsDir, "bob")
	elsewhere := filepath.Join(t.TempDir(), "bob")
	if err := os.Rename(bob, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, bob); err != nil {
		t.Fatal(err)
	}
	alice := filepath.Join(dir, filestore.TenantsDir, "alice", "a.md")
	before := readDisk(t, alice)
	out, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir, "--all-tenants")
	if code != exitFailed || out != "" || strings.Contains(stderr, "can be removed") ||
		!strings.Contains(stderr, `"bob" (a symbolic link`) || !strings.Contains(stderr, "Nothing was changed") {
		t.Errorf("rekey --all-tenants with bob behind a link: exit %d, stdout %q, stderr %q; want it refused (exit %d), naming bob", code, out, stderr, exitFailed)
	}
	if after := readDisk(t, alice); after != before {
		t.Errorf("the refused rekey changed alice's a.md")
	}
	// With bob's directory back in place, every tenant is rekeyed.
	if err := os.Remove(bob); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(elsewhere, bob); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runMemtoolEnv(t, env, "rekey", "--store", dir, "--all-tenants")
	if code != 0 || !strings.Contains(out, "of tenant bob") || !strings.Contains(stderr, "can be removed") {
		t.Errorf("rekey --all-tenants: exit %d, %q, %q", code, out, stderr)
	}
}
