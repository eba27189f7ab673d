package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
)

// A route asked with a method it does not serve is 405 with Allow; a path
// that is no route is 404.
func TestWrongMethodIs405(t *testing.T) {
	f := withResourceAPI(t)
	got := f.do(t, "GET", "/v1/memory", "", "")
	if got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/memory: %d, Allow %q, %s; want 405, Allow POST", got.status, got.header.Get("Allow"), got.body)
	}
	got = f.do(t, "DELETE", "/healthz", "", "")
	if got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE /healthz: %d, Allow %q; want 405, Allow GET, HEAD", got.status, got.header.Get("Allow"))
	}
	if got := f.do(t, "GET", "/v1/nothing", "", ""); got.status != http.StatusNotFound || !strings.Contains(got.body, "no such route") {
		t.Errorf("GET /v1/nothing: %d %s", got.status, got.body)
	}
}

// Every answer of an authenticated route says no-store: each is one key's
// memory, which no cache in between may keep or give to another.
func TestAuthenticatedAnswersAreNotStored(t *testing.T) {
	f := withResourceAPI(t)
	_, alice := f.key(t, "alice", keys.Write)
	if got := f.do(t, "POST", "/v1/memory", alice, `{"command":"create","path":"/memories/a.md","file_text":"x"}`); got.status != 200 {
		t.Fatalf("create: %d %s", got.status, got.body)
	}
	for _, path := range []string{"/v1/file?path=/memories/a.md", "/v1/files", "/v1/dir?path=/memories", "/v1/search?q=x", "/v1/entry?path=/memories/a.md"} {
		got := f.do(t, "GET", path, alice, "")
		if got.status != 200 || got.header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d, Cache-Control %q", path, got.status, got.header.Get("Cache-Control"))
		}
	}
}
