package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
)

// tokenTable is a Config.OAuth verifier with fixed answers: what the
// server does with a verifier's answer is under test here, not OAuth
// (mcpserver and cmd/memtool test that against a real issuer).
type tokenTable map[string]keys.Key

func (tt tokenTable) Verify(ctx context.Context, token string) (keys.Key, error) {
	switch token {
	case "jwt-forbidden":
		return keys.Key{}, fmt.Errorf("%w: no memory scope", server.ErrInsufficientScope)
	case "jwt-no-tenant":
		return keys.Key{}, fmt.Errorf("%w: the tenant claim names no valid tenant", server.ErrForbidden)
	}
	if k, ok := tt[token]; ok {
		return k, nil
	}
	return keys.Key{}, fmt.Errorf("%w: invalid_token: the signature does not verify", keys.ErrInvalidToken)
}

// OAuth tokens are verified by Config.OAuth on its routes alone, beside
// the memtool keys; refusals there name the metadata; public routes need
// no token; a verifier granting admin is not obeyed.
func TestOAuthRoutes(t *testing.T) {
	const meta = "https://memory.example/.well-known/oauth-protected-resource/mcp"
	f := newFixture(t, func(c *server.Config) {
		c.OAuth = tokenTable{
			"jwt-alice": {ID: "oauth:alice", Tenant: "alice", Scope: keys.Write},
			"jwt-admin": {ID: "oauth:root", Tenant: "alice", Scope: keys.Admin},
		}
		c.OAuthRoutes = []string{"/v1/whoami"}
		c.ResourceMetadata = meta
		c.OAuthScope = "memory:read"
		c.Public = map[string]http.Handler{"GET /.well-known/test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("public")) })}
	})
	_, key := f.key(t, "bob", keys.Read)
	for _, c := range []struct {
		name, path, token string
		status            int
		body, challenge   string
	}{
		{"a token on its route", "/v1/whoami", "jwt-alice", 200, "true oauth:alice alice write", ""},
		{"a memtool key beside it", "/v1/whoami", key, 200, "bob read", ""},
		{"no token", "/v1/whoami", "", 401, "missing bearer token", `Bearer realm="memtool", resource_metadata="` + meta + `"`},
		{"an invalid token", "/v1/whoami", "jwt-bad", 401, "invalid_token: the signature does not verify", `Bearer realm="memtool", error="invalid_token", resource_metadata="` + meta + `"`},
		{"a token without scope", "/v1/whoami", "jwt-forbidden", 403, "no memory scope", `Bearer realm="memtool", error="insufficient_scope", scope="memory:read", resource_metadata="` + meta + `"`},
		{"a token without a tenant", "/v1/whoami", "jwt-no-tenant", 403, "names no valid tenant", `Bearer realm="memtool", resource_metadata="` + meta + `"`},
		{"an unknown memtool key", "/v1/whoami", "mt_nope", 401, "invalid, expired or revoked API key", `Bearer realm="memtool", error="invalid_token", resource_metadata="` + meta + `"`},
		{"a token elsewhere", "/v1/tenants", "jwt-alice", 401, "invalid, expired or revoked API key", `Bearer realm="memtool", error="invalid_token"`},
		{"no token elsewhere", "/v1/tenants", "", 401, "missing bearer token", `Bearer realm="memtool"`},
		{"a verifier granting admin", "/v1/whoami", "jwt-admin", 503, "", ""},
		{"a public route", "/.well-known/test", "", 200, "public", ""},
	} {
		r := f.do(t, "GET", c.path, c.token, "")
		if r.status != c.status || !strings.Contains(r.body, c.body) || r.header.Get("WWW-Authenticate") != c.challenge {
			t.Errorf("%s: %d %q %q; want %d %q %q", c.name, r.status, r.body, r.header.Get("WWW-Authenticate"), c.status, c.body, c.challenge)
		}
	}
	// An OAuth principal is never admin: it cannot name another tenant.
	if r := f.do(t, "GET", "/v1/whoami", "jwt-alice", "", server.TenantHeader, "bob"); r.status != 403 {
		t.Errorf("an OAuth token naming another tenant: %+v", r)
	}
	// The log names the OAuth caller by its key id, never by its token.
	if log := f.log.waitFor(t, `"key":"oauth:alice"`); !strings.Contains(log, `"key":"oauth:alice"`) || strings.Contains(log, "jwt-") {
		t.Errorf("the log:\n%s", log)
	}
}
