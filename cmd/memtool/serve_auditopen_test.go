package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAuditLogUnopenableCreatesNothing: memtool serve with a policy
// whose audit log cannot be opened (its directory is missing) stops at
// its start, as the other commands do (flagPolicyReady), and leaves no
// store, no keyring and no recorded policy behind. It started, created the
// store, and recorded the policy in each tenant a request named before
// failing that request on the log.
func TestServeAuditLogUnopenableCreatesNothing(t *testing.T) {
	t.Parallel()
	bin := plainBinary(t)
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	logName := filepath.Join(dir, "no-such-dir", "audit.jsonl")
	if err := os.WriteFile(policy, []byte(`{"history":{},"audit":"`+logName+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{filepath.Join(dir, "memories"), "sqlite://" + filepath.Join(dir, "m.db")} {
		// A server that starts anyway is stopped at hangGuard, and fails.
		ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
		cmd := exec.CommandContext(ctx, bin, "serve", "--store", url, "--policy", policy, "--listen", "127.0.0.1:0")
		cmd.Env = childEnv()
		var errOut strings.Builder
		cmd.Stderr = &errOut
		cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != exitStore || !strings.Contains(errOut.String(), "audit log") {
			t.Errorf("serve --store %s with an audit log it cannot open: exit %d, %q; want %d naming the audit log", url, code, errOut.String(), exitStore)
		}
		left, _ := filepath.Glob(filepath.Join(dir, "m*"))
		if len(left) != 0 {
			t.Errorf("serve --store %s with an audit log it cannot open left %v", url, left)
		}
		for _, f := range left {
			os.RemoveAll(f)
		}
	}
}
