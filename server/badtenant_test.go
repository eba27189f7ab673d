package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// TestVerifiedKeyWithoutValidTenant: a key that a verifier gives with no
// valid tenant ("" or "../bob": a key record changed by hand, an OAuth
// verifier's slip) is the verifier's failure, 503, and opens no memory:
// tenant "" would be the store itself, and the audit log's filter on ""
// reads every tenant's entries.
func TestVerifiedKeyWithoutValidTenant(t *testing.T) {
	var mu sync.Mutex
	var opened []string
	table := tokenTable{
		"mt_empty": {ID: "0000000000000001", Tenant: "", Scope: keys.Write},
		"mt_dots":  {ID: "0000000000000002", Tenant: "../bob", Scope: keys.Write},
		"mt_good":  {ID: "0000000000000003", Tenant: "alice", Scope: keys.Write},
		"jwt-none": {ID: "oauth:", Tenant: "", Scope: keys.Read},
	}
	srv, err := server.New(server.Config{
		Keys: table, OAuth: table, OAuthRoutes: []string{"/v1/whoami"},
		Logger: slog.New(slog.DiscardHandler), Rate: -1, FailRate: -1,
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			mu.Lock()
			defer mu.Unlock()
			opened = append(opened, tenant)
			return memstore.New(), nil
		},
		Mount: map[string]http.Handler{"/v1/whoami": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := server.PrincipalFrom(r.Context())
			w.Write([]byte("tenant=" + p.Tenant))
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	f := &fixture{url: ts.URL}
	for _, c := range []struct{ path, token, body string }{
		{"/v1/memory", "mt_empty", `{"command":"view","path":"/memories"}`},
		{"/v1/memory", "mt_dots", `{"command":"view","path":"/memories"}`},
		{"/v1/whoami", "mt_empty", ""},
		{"/v1/whoami", "jwt-none", ""},
	} {
		method := "POST"
		if c.body == "" {
			method = "GET"
		}
		if r := f.do(t, method, c.path, c.token, c.body); r.status != 503 || strings.Contains(r.body, "tenant=") {
			t.Errorf("%s with a key of no valid tenant (%s): %d %s, want 503", c.path, c.token, r.status, r.body)
		}
	}
	if r := f.do(t, "GET", "/v1/whoami", "mt_good", ""); r.status != 200 || r.body != "tenant=alice" {
		t.Errorf("a good key: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 0 {
		t.Errorf("memories opened for keys of no valid tenant: %q", opened)
	}
}
