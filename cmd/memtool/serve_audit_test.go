package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memtool serve with the audit policy on serves GET /v1/audit: each key
// reads its tenant's entries of the log file, an admin key those of the
// tenant it names; without the policy the route is 501. With secrets in
// redact mode, a PUT's answer does not describe the sent body as the file.
func TestServeAuditLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.json")
	logFile := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(`{"audit": "`+logFile+`", "secrets": "redact"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	store := tenantBackends()[0].URL(t)
	alice := addKey(t, store, "alice", "read")
	aliceW := addKey(t, store, "alice", "write")
	bob := addKey(t, store, "bob", "write")
	admin := addKey(t, store, "ops", "admin")
	p := startServe(t, plainBinary(t), store, "--policy", policy)

	entries := func(token string, header ...string) []struct{ Tenant, Op, Path, Outcome string } {
		t.Helper()
		status, body := request(t, "GET", p.url, "/v1/audit", token, "", header...)
		var page struct {
			Entries []struct{ Tenant, Op, Path, Outcome string }
		}
		if err := json.Unmarshal([]byte(body), &page); status != 200 || err != nil {
			t.Fatalf("GET /v1/audit: %d %v", status, err)
		}
		return page.Entries
	}
	// Before anything is written the log is empty, not an error.
	if got := entries(alice); len(got) != 0 {
		t.Errorf("the log before any change: %+v", got)
	}
	mustPost(t, p.url, aliceW, `{"command":"create","path":"/memories/alice-note.md","file_text":"a\n"}`)
	mustPost(t, p.url, bob, `{"command":"create","path":"/memories/bob-secret-name.md","file_text":"b\n"}`)

	created := func(got []struct{ Tenant, Op, Path, Outcome string }, tenant, path string) bool {
		for _, e := range got {
			if e.Tenant != tenant {
				t.Errorf("an entry of tenant %q in the log served for %q: %+v", e.Tenant, tenant, e)
			}
			if e.Op == "create" && e.Path == path && e.Outcome == "ok" {
				return true
			}
		}
		return false
	}
	if got := entries(alice); !created(got, "alice", "/memories/alice-note.md") {
		t.Errorf("alice's read key: no entry of her create in %+v", got)
	}
	if got := entries(bob); !created(got, "bob", "/memories/bob-secret-name.md") {
		t.Errorf("bob's key: no entry of his create in %+v", got)
	}
	if got := entries(admin, "X-Memtool-Tenant", "bob"); !created(got, "bob", "/memories/bob-secret-name.md") {
		t.Errorf("the admin key naming bob: no entry of bob's create in %+v", got)
	}

	// The secrets policy redacts: the answer to a PUT names no ETag, size
	// or SHA-256 of what was sent, which is not what the file holds.
	status, answer := request(t, "PUT", p.url, "/v1/file?path=/memories/token.md", aliceW, "ghp_"+strings.Repeat("a1B2", 9)+"\n")
	if status != http.StatusOK || strings.Contains(answer, "sha256") || strings.Contains(answer, "size") {
		t.Errorf("PUT of a token under the redact policy: %d %s; want 200 naming no size or sha256", status, answer)
	}
	if _, kept := request(t, "GET", p.url, "/v1/file?path=/memories/token.md", alice, ""); strings.Contains(kept, "ghp_") {
		t.Errorf("the token was kept: %q", kept)
	}

	// Without the audit policy: 501.
	plain := startServe(t, plainBinary(t), store)
	if status, body := request(t, "GET", plain.url, "/v1/audit", alice, ""); status != http.StatusNotImplemented {
		t.Errorf("GET /v1/audit without the audit policy: %d %s", status, body)
	}
}
