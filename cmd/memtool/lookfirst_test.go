package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLookingFirstDecidesNothing: an operator who adds a key, then looks
// at the store (info, view, tenants) before serving it, has not made it
// single-tenant: the key's tenant is served. Reading an unused store's
// tenant-less memory decided its tenancy for good, and every key's
// requests then failed.
func TestLookingFirstDecidesNothing(t *testing.T) {
	t.Parallel()
	url := "sqlite://" + filepath.Join(t.TempDir(), "m.db")
	token := addKey(t, url, "alice", "write")
	out := mustRunCLI(t, nil, "", "info", "--store", url)
	if !strings.Contains(out, "tenancy:    not decided yet") {
		t.Errorf("memtool info on an unused store:\n%s", out)
	}
	mustRunCLI(t, nil, "", "view", "--store", url, "/memories")
	runCLI(t, nil, "", "tenants", "--store", url)
	srv := startServe(t, memtoolBinary(t), url)
	if code, body := mustPost(t, srv.url, token, `{"command":"create","path":"/memories/a.md","file_text":"hi"}`); code != 200 || !strings.Contains(body, "created") {
		t.Fatalf("the key's first request after the looks: %d %s\n%s", code, body, srv.log())
	}
	if out := mustRunCLI(t, nil, "", "tenants", "--store", url); out != "alice\n" {
		t.Errorf("memtool tenants after serving alice: %q", out)
	}
}
