package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storeurl"
)

// release closes the stack whose store the server names (its audit log
// file among its resources), whatever its age, and leaves the others
// working; Close closes the rest.
func TestTenantStacksRelease(t *testing.T) {
	dir := t.TempDir()
	policy, logFile := filepath.Join(dir, "policy.json"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(`{"audit": "`+logFile+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tenantOf, closer, err := storeurl.OpenTenants(t.Context(), filepath.Join(dir, "store"), &storeurl.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	var stderr bytes.Buffer
	env := &cliEnv{stdout: &stderr, stderr: &stderr, getenv: func(string) string { return "" }}
	stacks := &tenantStacks{env: env, sf: storeFlags{policy: policy}, tenantOf: tenantOf}
	ctx := context.Background()
	old, err := stacks.open(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	newer, err := stacks.open(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	newest, err := stacks.open(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := stacks.release("alice", newest); err != nil {
		t.Fatal(err)
	}
	newest.WriteFile(ctx, "n.md", []byte("x"), memtool.CreateOnly)
	if !strings.Contains(stderr.String(), "audit log") {
		t.Errorf("a write through the released newest stack logged to its audit file: %q", stderr.String())
	}
	stderr.Reset()
	if err := old.WriteFile(ctx, "o.md", []byte("y"), memtool.CreateOnly); err != nil || stderr.Len() != 0 {
		t.Errorf("the oldest stack after the newest's release: %v %q", err, stderr.String())
	}
	if err := stacks.release("alice", old); err != nil {
		t.Fatal(err)
	}
	// The released stack's audit log is closed: its writes are reported.
	old.WriteFile(ctx, "a.md", []byte("x"), memtool.CreateOnly)
	if !strings.Contains(stderr.String(), "audit log") {
		t.Errorf("a write through the released stack logged to its audit file: %q", stderr.String())
	}
	stderr.Reset()
	if err := newer.WriteFile(ctx, "b.md", []byte("y"), memtool.CreateOnly); err != nil || stderr.Len() != 0 {
		t.Errorf("the newer stack after the release: %v %q", err, stderr.String())
	}
	if data, _ := os.ReadFile(logFile); !strings.Contains(string(data), "/memories/b.md") {
		t.Errorf("the newer stack's audit log: %q", data)
	}
	if err := stacks.Close(); err != nil {
		t.Fatal(err)
	}
	newer.WriteFile(ctx, "c.md", []byte("z"), memtool.CreateOnly)
	if !strings.Contains(stderr.String(), "audit log") {
		t.Errorf("Close left the newer stack's audit log open: %q", stderr.String())
	}
}
