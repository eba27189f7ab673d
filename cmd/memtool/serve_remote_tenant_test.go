package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A remote store with --tenant: an admin key acts on the named tenant
// (X-Memtool-Tenant) and lists the tenants; any other key gets a clear
// error naming the server's refusal, and nothing is changed.
func TestServeRemoteTenant(t *testing.T) {
	t.Parallel()
	store := tenantBackends()[0].URL(t)
	admin := addKey(t, store, "ops", "admin")
	alice := addKey(t, store, "alice", "write")
	bob := addKey(t, store, "bob", "write")
	p := startServe(t, plainBinary(t), store)

	create := `{"command":"create","path":"/memories/from-admin.md","file_text":"made by ops\n"}` + "\n"
	out, errOut, code := runMemtool(t, childEnv("MEMTOOL_TOKEN="+admin), create, "exec", "--store", p.url, "--tenant", "bob")
	if code != 0 || !strings.Contains(out, `"is_error":false`) {
		t.Fatalf("exec --tenant bob with an admin key: %d %s %s", code, out, errOut)
	}
	if _, answer := mustPost(t, p.url, bob, `{"command":"view","path":"/memories/from-admin.md"}`); !strings.Contains(answer, "made by ops") {
		t.Errorf("bob's view of the file the admin key made for him: %s", answer)
	}
	if _, answer := mustPost(t, p.url, admin, `{"command":"view","path":"/memories"}`); strings.Contains(answer, "from-admin") {
		t.Errorf("the file landed in the admin key's own tenant: %s", answer)
	}
	out, errOut, code = runMemtool(t, childEnv("MEMTOOL_TOKEN="+admin), "", "tenants", "--store", p.url)
	if code != 0 || !strings.Contains(out, "bob\n") {
		t.Errorf("tenants with an admin key: %d %q %s", code, out, errOut)
	}

	// A write key naming another tenant: refused before any command runs.
	create = `{"command":"create","path":"/memories/from-alice.md","file_text":"x"}` + "\n"
	out, errOut, code = runMemtool(t, childEnv("MEMTOOL_TOKEN="+alice), create, "exec", "--store", p.url, "--tenant", "bob")
	if code == 0 || !strings.Contains(errOut, "403") || !strings.Contains(errOut, "only an admin key") {
		t.Errorf("exec --tenant bob with alice's write key: %d %q %q", code, out, errOut)
	}
	if _, answer := mustPost(t, p.url, bob, `{"command":"view","path":"/memories"}`); strings.Contains(answer, "from-alice") {
		t.Errorf("alice's key wrote into bob's memory: %s", answer)
	}
	_, errOut, code = runMemtool(t, childEnv("MEMTOOL_TOKEN="+alice), "", "tenants", "--store", p.url)
	if code == 0 || !strings.Contains(errOut, "admin key") {
		t.Errorf("tenants with a write key: %d %q", code, errOut)
	}
	// A key that is not an admin key still migrates into its own memory,
	// which the server's other tenants do not make "not empty".
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "moved.md"), []byte("moved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	carol := addKey(t, store, "carol", "write")
	if _, errOut, code := runMemtool(t, childEnv("MEMTOOL_TOKEN="+carol), "", "migrate", "--from", src, "--to", p.url); code != 0 {
		t.Errorf("migrate --to the server with carol's write key: %d %q", code, errOut)
	}
	if _, answer := mustPost(t, p.url, carol, `{"command":"view","path":"/memories/moved.md"}`); !strings.Contains(answer, "moved") {
		t.Errorf("carol's memory after migrate: %s", answer)
	}
	// Her own tenant, named, needs no admin key.
	_, errOut, code = runMemtool(t, childEnv("MEMTOOL_TOKEN="+alice), "", "view", "--store", p.url, "--tenant", "alice", "/memories")
	if code != 0 {
		t.Errorf("view --tenant alice with alice's key: %d %q", code, errOut)
	}
}
