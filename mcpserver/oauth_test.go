package mcpserver_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/mcpcalls"
	"github.com/memtool/memtool/internal/oauthtest"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// TestOAuthDiscovery: the keys are found through either kind of metadata,
// for issuers with a path and with a trailing slash.
func TestOAuthDiscovery(t *testing.T) {
	for _, c := range []struct {
		path   string
		openID bool
	}{{"", true}, {"/realms/team", false}, {"/realms/team", true}, {"/", true}, {"/tenant-1/", false}} {
		iss := oauthtest.NewAt(t, c.path, c.openID)
		s := newOAuthServer(t, iss, "")
		tok := iss.Token(t, iss.Claims(s.resource, "alice", "memory:read"))
		if resp, body := post(t, s.url, callView, map[string]string{"Authorization": "Bearer " + tok}); resp.StatusCode != 200 {
			t.Errorf("issuer %s (OpenID %v): %d %q", iss.URL, c.openID, resp.StatusCode, body)
		}
	}
}

// oauthServer is an MCP server behind OAuth with the issuer, over two
// tenants' memories; the tenant is the claim "tenant".
type oauthServer struct {
	url      string // of /mcp
	oauth    *mcpserver.OAuth
	tenants  map[string]*memtool.Memory
	resource string
}

func newOAuthServer(t *testing.T, iss *oauthtest.Issuer, jwksURL string) *oauthServer {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &oauthServer{url: srv.URL + "/mcp", resource: srv.URL + "/mcp", tenants: map[string]*memtool.Memory{
		"alice": memtool.New(memstore.New(), nil),
		"bob":   memtool.New(memstore.New(), nil),
	}}
	var err error
	s.oauth, err = mcpserver.NewOAuth(mcpserver.OAuthConfig{Resource: s.resource, Issuer: iss.URL, JWKSURL: jwksURL, TenantClaim: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	memoryOf := func(ctx context.Context, tenant string) (*memtool.Memory, error) {
		if mem, ok := s.tenants[tenant]; ok {
			return mem, nil
		}
		return nil, errors.Join(mcpserver.ErrForbidden, errors.New("unknown tenant"))
	}
	mux.Handle(s.oauth.MetadataPath(), s.oauth.MetadataHandler())
	read, write := s.oauth.Scopes()
	mux.Handle("/mcp", mcpserver.NewHTTPHandler(s.oauth.Open(memoryOf), &mcpserver.HTTPOptions{ResourceMetadataURL: s.oauth.MetadataURL(), ReadScope: read, WriteScope: write}))
	return s
}

func TestOAuthValidToken(t *testing.T) {
	iss := oauthtest.New(t)
	s := newOAuthServer(t, iss, "")
	checkBattery(t, httpSession(t, iss.Token(t, iss.Claims(s.resource, "alice", "memory:read memory:write")), s.url))
	if iss.Fetches() != 1 {
		t.Errorf("the key set was fetched %d times for one token, want 1", iss.Fetches())
	}
	// A read-scope token of the same tenant sees memory_view alone.
	mem := s.tenants["alice"]
	mem.Run(context.Background(), []byte(`{"command":"create","path":"/memories/a.txt","file_text":"one\ntwo"}`))
	readToken := iss.Token(t, iss.Claims(s.resource, "alice", "memory:read"))
	checkReadOnly(t, func() *mcp.ClientSession { return httpSession(t, readToken, s.url) }, mem)
	// The key set can also be named instead of discovered.
	s2 := newOAuthServer(t, iss, iss.KeysURL)
	res, err := httpSession(t, iss.Token(t, iss.Claims(s2.resource, "alice", "memory:write")), s2.url).ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 7 {
		t.Fatalf("write token, named key set: %v %+v", err, res)
	}
}

// TestOAuthTenants: each token reaches its own tenant's memory only.
func TestOAuthTenants(t *testing.T) {
	iss := oauthtest.New(t)
	s := newOAuthServer(t, iss, "")
	ctx := context.Background()
	alice := httpSession(t, iss.Token(t, iss.Claims(s.resource, "alice", "memory:write")), s.url)
	if res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/alice.txt", "file_text": "private"}}); err != nil || res.IsError {
		t.Fatalf("alice's create: %v %+v", err, res)
	}
	bob := httpSession(t, iss.Token(t, iss.Claims(s.resource, "bob", "memory:write")), s.url)
	res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/alice.txt"}})
	if err != nil || !res.IsError || strings.Contains(mcpcalls.Result(t, res).Text, "private") {
		t.Errorf("bob viewing alice's file: %v %+v", err, res)
	}
	if got := listing(t, s.tenants["bob"]); strings.Contains(got, "alice") {
		t.Errorf("bob's memory: %s", got)
	}
}

func TestOAuthRefusals(t *testing.T) {
	iss := oauthtest.New(t)
	s := newOAuthServer(t, iss, "")
	good := func() map[string]any { return iss.Claims(s.resource, "alice", "memory:write") }
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	other := oauthtest.NewKey(t)
	meta := `resource_metadata="` + s.oauth.MetadataURL() + `"`
	for _, c := range []struct {
		name   string
		token  string
		status int
		body   string
	}{
		{"no token", "", 401, "bearer token is required"},
		{"empty token", " ", 401, "bearer token is required"},
		{"not a JWT", "abc.def", 401, "invalid_token"},
		{"wrong audience", iss.Token(t, with("aud", []string{"https://other.example/mcp"})), 401, "invalid_token"},
		{"no audience", iss.Token(t, with("aud", nil)), 401, "invalid_token"},
		{"wrong issuer", iss.Token(t, with("iss", "https://evil.example")), 401, "invalid_token"},
		{"expired", iss.Token(t, with("exp", time.Now().Add(-time.Hour).Unix())), 401, "expired"},
		{"no expiry", iss.Token(t, with("exp", nil)), 401, "no expiry"},
		{"not yet valid", iss.Token(t, with("nbf", time.Now().Add(time.Hour).Unix())), 401, "invalid_token"},
		{"bad signature", oauthtest.Sign(t, other, iss.KeyID, good()), 401, "signature"},
		{"unknown key", oauthtest.Sign(t, other, "k2", good()), 401, "key id"},
		{"HMAC with the public key", hmacToken(t, iss, good()), 401, "invalid_token"},
		{"unsigned", unsignedToken(good()), 401, "invalid_token"},
		{"missing scope", iss.Token(t, with("scope", "profile email")), 403, "insufficient_scope"},
		{"no scope", iss.Token(t, with("scope", nil)), 403, "insufficient_scope"},
		{"no tenant claim", iss.Token(t, with("tenant", nil)), 403, "tenant"},
		{"invalid tenant", iss.Token(t, with("tenant", "../alice")), 403, "tenant"},
		{"tenant not a string", iss.Token(t, with("tenant", []string{"alice"})), 403, "tenant"},
		{"unknown tenant", iss.Token(t, with("tenant", "carol")), 403, "unknown tenant"},
	} {
		header := map[string]string{}
		if c.token != "" {
			header["Authorization"] = "Bearer " + c.token
		}
		resp, body := post(t, s.url, callView, header)
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d and %q", c.name, resp.StatusCode, body, c.status, c.body)
		}
		if tok := strings.TrimSpace(c.token); tok != "" && (strings.Contains(body, tok) || strings.Contains(resp.Header.Get("WWW-Authenticate"), tok)) {
			t.Errorf("%s: the answer echoes the token", c.name)
		}
		// RFC 6750 §3: no error code for a request without a token,
		// invalid_token for a token that is not good, and
		// insufficient_scope, with the scope that would do, for one that
		// grants too little; a 403 for another reason is no challenge.
		var want string
		switch {
		case c.status == 401 && strings.TrimSpace(c.token) == "":
			want = `Bearer realm="memtool", ` + meta
		case c.status == 401:
			want = `Bearer realm="memtool", error="invalid_token", ` + meta
		case strings.Contains(c.body, "insufficient_scope"):
			want = `Bearer realm="memtool", error="insufficient_scope", scope="memory:read", ` + meta
		}
		if got := resp.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", c.name, got, want)
		}
	}
	// A read token calling a tool that writes lacks the write scope.
	mem := s.tenants["alice"]
	before := listing(t, mem)
	readToken := iss.Token(t, iss.Claims(s.resource, "alice", "memory:read"))
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("w.txt") + `}`,
		`[` + callView + `,{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + create("w.txt") + `}]`,
	} {
		resp, answer := post(t, s.url, body, map[string]string{"Authorization": "Bearer " + readToken})
		want := `Bearer realm="memtool", error="insufficient_scope", scope="memory:write", ` + meta
		if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want || strings.Contains(answer, readToken) {
			t.Errorf("a read token writing: %d %q %q, want 403 and %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), answer, want)
		}
	}
	if after := listing(t, mem); after != before {
		t.Errorf("a read token changed the memory:\n%s", after)
	}
	// Its views, and calls of tools that do not exist, are answered.
	for _, body := range []string{callView, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_nope","arguments":{}}}`} {
		if resp, answer := post(t, s.url, body, map[string]string{"Authorization": "Bearer " + readToken}); resp.StatusCode != 200 {
			t.Errorf("a read token: %d %q", resp.StatusCode, answer)
		}
	}
	// A valid token still works after all that.
	if resp, body := post(t, s.url, callView, map[string]string{"Authorization": "Bearer " + iss.Token(t, good())}); resp.StatusCode != 200 {
		t.Errorf("valid token: %d %q", resp.StatusCode, body)
	}
}

// hmacToken is a token whose header says HS256, "signed" with the
// issuer's public key as the secret: the algorithm-confusion attack.
func hmacToken(t *testing.T, iss *oauthtest.Issuer, claims map[string]any) string {
	t.Helper()
	pub, err := json.Marshal(jose.JSONWebKey{Key: &iss.Key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	head := rawPart(map[string]any{"alg": "HS256", "typ": "JWT", "kid": iss.KeyID})
	body := rawPart(claims)
	mac := hmac.New(sha256.New, pub)
	mac.Write([]byte(head + "." + body))
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// unsignedToken is a token with "alg": "none".
func unsignedToken(claims map[string]any) string {
	return rawPart(map[string]any{"alg": "none", "typ": "JWT"}) + "." + rawPart(claims) + "."
}

func rawPart(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestOAuthMetadata: the protected-resource metadata (RFC 9728) is served
// where the challenge points, and names the authorization server.
func TestOAuthMetadata(t *testing.T) {
	iss := oauthtest.New(t)
	s := newOAuthServer(t, iss, "")
	if want := strings.TrimSuffix(s.url, "/mcp") + "/.well-known/oauth-protected-resource/mcp"; s.oauth.MetadataURL() != want {
		t.Errorf("MetadataURL %q, want %q", s.oauth.MetadataURL(), want)
	}
	resp, err := http.Get(s.oauth.MetadataURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
		BearerMethods        []string `json:"bearer_methods_supported"`
	}
	if err := json.Unmarshal(body, &meta); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metadata: %d %s %v", resp.StatusCode, body, err)
	}
	if meta.Resource != s.resource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss.URL ||
		strings.Join(meta.ScopesSupported, " ") != "memory:read memory:write" || strings.Join(meta.BearerMethods, " ") != "header" {
		t.Errorf("metadata: %s", body)
	}
}

func TestNewOAuthChecksConfig(t *testing.T) {
	for _, cfg := range []mcpserver.OAuthConfig{
		{Resource: "", Issuer: "https://auth.example"},
		{Resource: "/mcp", Issuer: "https://auth.example"},
		{Resource: "ftp://mem.example/mcp", Issuer: "https://auth.example"},
		{Resource: "https://mem.example/mcp", Issuer: ""},
		{Resource: "https://mem.example/mcp", Issuer: "auth.example"},
		{Resource: "https://mem.example/mcp", Issuer: "https://auth.example", JWKSURL: "/keys"},
		{Resource: "https://mem.example/mcp", Issuer: "https://auth.example", JWKSURL: "file:///etc/keys.json"},
	} {
		if _, err := mcpserver.NewOAuth(cfg); err == nil {
			t.Errorf("NewOAuth(%+v) accepted", cfg)
		}
	}
}
