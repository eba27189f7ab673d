package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// memtool serve reads its policy file once, at start, whether --policy or
// $MEMTOOL_POLICY names it: a tenant first served after the file changed
// gets the policy the server started with, and a bad file named by
// $MEMTOOL_POLICY stops the server before it listens.
func TestServeReadsPolicyOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"limits":{"max_file_size":10}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := addKey(t, dir, "root", "admin")
	p := startServe(t, plainBinary(t), dir, "--policy", policy)
	create := `{"command":"create","path":"/memories/big.md","file_text":"more than ten bytes"}`
	if _, answer := mustPost(t, p.url, admin, create, "X-Memtool-Tenant", "first"); !strings.Contains(answer, `"is_error":true`) {
		t.Fatalf("a file over the policy's limit: %s", answer)
	}
	if err := os.WriteFile(policy, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, answer := mustPost(t, p.url, admin, create, "X-Memtool-Tenant", "later"); !strings.Contains(answer, `"is_error":true`) {
		t.Errorf("a tenant first served after the policy file changed wrote past the limit the server started with: %s", answer)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"limits":`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A server that starts anyway is stopped at hangGuard, and fails.
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, plainBinary(t), "serve", "--store", dir, "--listen", "127.0.0.1:0")
	cmd.Env = append(childEnv(), "MEMTOOL_POLICY="+bad)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(errOut.String(), "bad.json") {
		t.Errorf("memtool serve with a bad $MEMTOOL_POLICY: exit %d, %q; want a usage error naming the file", code, errOut.String())
	}
}
