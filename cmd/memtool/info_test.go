package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInfoMultiTenantBadPolicy: a --policy file that cannot be read is an
// error (exit status 2) on a multi-tenant store too, where info, which
// describes no tenant without --tenant, used to skip the file unread and
// exit 0 as if it were fine.
func TestInfoMultiTenantBadPolicy(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	mustRunCLI(t, nil, "", "create", "--store", dir, "--tenant", "t1", "--text", "a", "/memories/a")
	missing := filepath.Join(t.TempDir(), "nope.json")
	out, stderr, code := runCLI(t, nil, "", "info", "--store", dir, "--policy", missing)
	if code != exitUsage || !strings.Contains(stderr, "nope.json") {
		t.Errorf("info with a missing policy file: exit %d, stdout %q, stderr %q; want 2", code, out, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"histroy":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, map[string]string{"MEMTOOL_POLICY": bad}, "", "info", "--store", dir); code != exitUsage {
		t.Errorf("info with a bad $MEMTOOL_POLICY: exit %d, stderr %q; want 2", code, stderr)
	}
}
