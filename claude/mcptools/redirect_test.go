package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/claude/mcptools"
)

// A server's configured headers (its bearer token, typically) go to that
// server alone: when it redirects the client to another host, the
// redirected request reaches that host without them, as net/http sends a
// request's own headers, and the server's own requests still carry them.
func TestHeadersStayWithTheirServer(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{} // host name -> Authorization headers it got
	record := func(name string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[name] = append(seen[name], r.Header.Get("Authorization"))
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer() }, nil)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
		handler.ServeHTTP(w, r)
	}))
	defer other.Close()
	configured := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("configured", r)
		if r.URL.Path == "/moved" {
			// 307 keeps the method and the body: the client posts its
			// message again, to the other server, which it reaches by
			// another host name.
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/mcp", http.StatusTemporaryRedirect)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer configured.Close()

	for _, path := range []string{"/mcp", "/moved"} {
		cfg := &mcptools.Config{Servers: map[string]mcptools.Server{
			"web": {Type: "http", URL: configured.URL + path, Headers: map[string]string{"Authorization": "Bearer s3cret"}},
		}}
		servers, err := mcptools.Connect(context.Background(), cfg, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		servers.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["configured"]) == 0 || len(seen["other"]) == 0 {
		t.Fatalf("requests: %v; want some to each host", seen)
	}
	for _, got := range seen["configured"] {
		if got != "Bearer s3cret" {
			t.Errorf("the configured server got Authorization %q, want its token", got)
		}
	}
	for _, got := range seen["other"] {
		if got != "" {
			t.Errorf("the host it redirected to got Authorization %q, want none", got)
		}
	}
}
