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
	sf := storeFlags{policy: policy}
	p, err := flagPolicy(env, &sf) // as runServe reads it, once
	if err != nil {
		t.Fatal(err)
	}
	stacks := &tenantStacks{env: env, sf: sf, policy: p, tenantOf: tenantOf}
	ctx := context.Background()
	open := func() memtool.Store {
		st, err := stacks.open(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	old, newer, newest := open(), open(), open()
	// release releases the stack which, then checks that a write through
	// it is reported (its audit log is closed), and that a write of name
	// through kept is logged without a word.
	release := func(which string, released, kept memtool.Store, name string) {
		t.Helper()
		if err := stacks.release("alice", released); err != nil {
			t.Fatal(err)
		}
		released.WriteFile(ctx, "released-"+name, []byte("x"), memtool.CreateOnly)
		if !strings.Contains(stderr.String(), "audit log") {
			t.Errorf("a write through the released %s stack logged to its audit file: %q", which, stderr.String())
		}
		stderr.Reset()
		if err := kept.WriteFile(ctx, name, []byte("y"), memtool.CreateOnly); err != nil || stderr.Len() != 0 {
			t.Errorf("a stack kept after the %s's release: %v %q", which, err, stderr.String())
		}
	}
	release("newest", newest, old, "o.md")
	release("oldest", old, newer, "b.md")
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
