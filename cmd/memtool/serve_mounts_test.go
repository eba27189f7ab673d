package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// request sends method to base+path with token (and header's name-value
// pairs) and returns the status and body; it fails t on an error.
func request(t *testing.T, method, base, path, token, body string, header ...string) (int, string) {
	t.Helper()
	status, answer, err := do(method, base+path, token, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return status, answer
}

// memtool serve also serves the resource API, GET /v1/search, and MCP at
// /mcp, all behind its keys: each sees the key's tenant, a read key
// writes through none of them, and a remote store (--store http://…)
// reaches the same memory.
func TestServeMounts(t *testing.T) {
	t.Parallel()
	store := tenantBackends()[0].URL(t)
	write := addKey(t, store, "alice", "write")
	read := addKey(t, store, "alice", "read")
	other := addKey(t, store, "bob", "write")
	p := startServe(t, plainBinary(t), store)

	// MCP writes; the tool endpoint, the resource API and search see it.
	cs := httpClient(t, p.url+"/mcp", write)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_create",
		Arguments: map[string]any{"path": "/memories/notes.md", "file_text": "alpha\nbeta gamma\n"}})
	if err != nil || res.IsError {
		t.Fatalf("memory_create over /mcp: %v %+v", err, res)
	}
	if _, answer := mustPost(t, p.url, write, `{"command":"view","path":"/memories/notes.md"}`); !strings.Contains(answer, "beta gamma") {
		t.Errorf("POST /v1/memory after the MCP create: %s", answer)
	}
	if status, body := request(t, "GET", p.url, "/v1/file?path=/memories/notes.md", read, ""); status != 200 || body != "alpha\nbeta gamma\n" {
		t.Errorf("GET /v1/file with a read key: %d %q", status, body)
	}
	status, body := request(t, "GET", p.url, "/v1/search?q="+url.QueryEscape("GAMMA"), read, "")
	var found struct {
		Matches []struct {
			Path string
			Line int
			Text string
		}
		Total int
	}
	if err := json.Unmarshal([]byte(body), &found); status != 200 || err != nil || found.Total != 1 ||
		found.Matches[0].Path != "/memories/notes.md" || found.Matches[0].Line != 2 || found.Matches[0].Text != "beta gamma" {
		t.Errorf("GET /v1/search: %d %s", status, body)
	}
	if status, body := request(t, "GET", p.url, "/v1/search?q=(&regex=true", read, ""); status != 400 || !strings.Contains(body, "error") {
		t.Errorf("a bad regex: %d %s", status, body)
	}

	// A read key writes through nothing.
	if status, _ := request(t, "PUT", p.url, "/v1/file?path=/memories/notes.md", read, "gone"); status != http.StatusForbidden {
		t.Errorf("PUT /v1/file with a read key: %d, want 403", status)
	}
	if names := toolNames(t, httpClient(t, p.url+"/mcp", read)); !slices.Equal(names, []string{"memory_search", "memory_view"}) {
		t.Errorf("a read key's MCP tools: %v", names)
	}

	// Another tenant's key sees none of it.
	if status, _ := request(t, "GET", p.url, "/v1/file?path=/memories/notes.md", other, ""); status != http.StatusNotFound {
		t.Errorf("bob's GET /v1/file of alice's file: %d, want 404", status)
	}
	if _, body := request(t, "GET", p.url, "/v1/search?q=gamma", other, ""); !strings.Contains(body, `"total":0`) {
		t.Errorf("bob's search: %s", body)
	}
	// No token: 401 on every mounted route.
	for _, path := range []string{"/mcp", "/v1/file?path=/memories/notes.md", "/v1/search?q=a"} {
		if status, _ := request(t, "GET", p.url, path, "", ""); status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", path, status)
		}
	}

	// The remote store reaches the same memory, with the token from the environment.
	out, errOut, code := runMemtool(t, childEnv("MEMTOOL_TOKEN="+write), "", "view", "--store", p.url, "/memories/notes.md")
	if code != 0 || !strings.Contains(out, "beta gamma") {
		t.Errorf("memtool view --store %s: %d %s %s", p.url, code, out, errOut)
	}
}
