package mcpserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
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
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// testIssuer is a local authorization server: its signing key is made
// here, and it publishes its metadata (RFC 8414) and its keys.
type testIssuer struct {
	url  string
	key  *ecdsa.PrivateKey
	kid  string
	hits int // key-set fetches
}

func newIssuer(t *testing.T) *testIssuer { return newIssuerAt(t, "", false) }

// newIssuerAt is an issuer whose identifier has path after the host, and
// which publishes its metadata the OpenID Connect way (after the path)
// rather than RFC 8414's (before it).
func newIssuerAt(t *testing.T, path string, openID bool) *testIssuer {
	t.Helper()
	iss := &testIssuer{key: newKey(t), kid: "k1"}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.url = srv.URL + path
	meta := func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss.url, "jwks_uri": srv.URL + "/keys"})
	}
	if openID {
		mux.HandleFunc(strings.TrimSuffix(path, "/")+"/.well-known/openid-configuration", meta)
	} else {
		mux.HandleFunc("/.well-known/oauth-authorization-server"+strings.TrimSuffix(path, "/"), meta)
	}
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		iss.hits++
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &iss.key.PublicKey, KeyID: iss.kid, Algorithm: "ES256", Use: "sig"}}})
	})
	return iss
}

// TestOAuthDiscovery: the keys are found through either kind of metadata,
// for issuers with a path and with a trailing slash.
func TestOAuthDiscovery(t *testing.T) {
	for _, c := range []struct {
		path   string
		openID bool
	}{{"", true}, {"/realms/team", false}, {"/realms/team", true}, {"/", true}, {"/tenant-1/", false}} {
		iss := newIssuerAt(t, c.path, c.openID)
		s := newOAuthServer(t, iss, "")
		tok := sign(t, iss.key, iss.kid, iss.claims(s.resource, "alice", "memory:read"))
		if resp, body := post(t, s.url, callView, map[string]string{"Authorization": "Bearer " + tok}); resp.StatusCode != 200 {
			t.Errorf("issuer %s (OpenID %v): %d %q", iss.url, c.openID, resp.StatusCode, body)
		}
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// sign makes a JWT of claims signed with key under kid.
func sign(t *testing.T, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// claims are a valid token's claims for tenant with scope, changed by edit.
func (iss *testIssuer) claims(resource, tenant, scope string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": iss.url, "aud": []string{resource}, "sub": "user-1", "tenant": tenant, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
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

func newOAuthServer(t *testing.T, iss *testIssuer, jwksURL string) *oauthServer {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &oauthServer{url: srv.URL + "/mcp", resource: srv.URL + "/mcp", tenants: map[string]*memtool.Memory{
		"alice": memtool.New(memstore.New(), nil),
		"bob":   memtool.New(memstore.New(), nil),
	}}
	var err error
	s.oauth, err = mcpserver.NewOAuth(mcpserver.OAuthConfig{Resource: s.resource, Issuer: iss.url, JWKSURL: jwksURL, TenantClaim: "tenant"})
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
	mux.Handle("/mcp", mcpserver.NewHTTPHandler(s.oauth.Open(memoryOf), &mcpserver.HTTPOptions{ResourceMetadataURL: s.oauth.MetadataURL()}))
	return s
}

func TestOAuthValidToken(t *testing.T) {
	iss := newIssuer(t)
	s := newOAuthServer(t, iss, "")
	checkBattery(t, httpSession(t, sign(t, iss.key, iss.kid, iss.claims(s.resource, "alice", "memory:read memory:write")), s.url))
	if iss.hits != 1 {
		t.Errorf("the key set was fetched %d times for one token, want 1", iss.hits)
	}
	// A read-scope token of the same tenant sees memory_view alone.
	mem := s.tenants["alice"]
	mem.Run(context.Background(), []byte(`{"command":"create","path":"/memories/a.txt","file_text":"one\ntwo"}`))
	checkReadOnly(t, httpSession(t, sign(t, iss.key, iss.kid, iss.claims(s.resource, "alice", "memory:read")), s.url), mem)
	// The key set can also be named instead of discovered.
	s2 := newOAuthServer(t, iss, iss.url+"/keys")
	res, err := httpSession(t, sign(t, iss.key, iss.kid, iss.claims(s2.resource, "alice", "memory:write")), s2.url).ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 7 {
		t.Fatalf("write token, named key set: %v %+v", err, res)
	}
}

// TestOAuthTenants: each token reaches its own tenant's memory only.
func TestOAuthTenants(t *testing.T) {
	iss := newIssuer(t)
	s := newOAuthServer(t, iss, "")
	ctx := context.Background()
	alice := httpSession(t, sign(t, iss.key, iss.kid, iss.claims(s.resource, "alice", "memory:write")), s.url)
	if res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/alice.txt", "file_text": "private"}}); err != nil || res.IsError {
		t.Fatalf("alice's create: %v %+v", err, res)
	}
	bob := httpSession(t, sign(t, iss.key, iss.kid, iss.claims(s.resource, "bob", "memory:write")), s.url)
	res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/alice.txt"}})
	if err != nil || !res.IsError || strings.Contains(asResult(t, res).Text, "private") {
		t.Errorf("bob viewing alice's file: %v %+v", err, res)
	}
	if got := listing(t, s.tenants["bob"]); strings.Contains(got, "alice") {
		t.Errorf("bob's memory: %s", got)
	}
}

func TestOAuthRefusals(t *testing.T) {
	iss := newIssuer(t)
	s := newOAuthServer(t, iss, "")
	good := func() map[string]any { return iss.claims(s.resource, "alice", "memory:write") }
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	other := newKey(t)
	for _, c := range []struct {
		name   string
		token  string
		status int
		body   string
	}{
		{"no token", "", 401, "bearer token is required"},
		{"not a JWT", "abc.def", 401, "invalid_token"},
		{"wrong audience", sign(t, iss.key, iss.kid, with("aud", []string{"https://other.example/mcp"})), 401, "invalid_token"},
		{"no audience", sign(t, iss.key, iss.kid, with("aud", nil)), 401, "invalid_token"},
		{"wrong issuer", sign(t, iss.key, iss.kid, with("iss", "https://evil.example")), 401, "invalid_token"},
		{"expired", sign(t, iss.key, iss.kid, with("exp", time.Now().Add(-time.Hour).Unix())), 401, "expired"},
		{"no expiry", sign(t, iss.key, iss.kid, with("exp", nil)), 401, "no expiry"},
		{"not yet valid", sign(t, iss.key, iss.kid, with("nbf", time.Now().Add(time.Hour).Unix())), 401, "invalid_token"},
		{"bad signature", sign(t, other, iss.kid, good()), 401, "signature"},
		{"unknown key", sign(t, other, "k2", good()), 401, "key id"},
		{"HMAC with the public key", hmacToken(t, iss, good()), 401, "invalid_token"},
		{"unsigned", unsignedToken(good()), 401, "invalid_token"},
		{"missing scope", sign(t, iss.key, iss.kid, with("scope", "profile email")), 403, "insufficient_scope"},
		{"no scope", sign(t, iss.key, iss.kid, with("scope", nil)), 403, "insufficient_scope"},
		{"no tenant claim", sign(t, iss.key, iss.kid, with("tenant", nil)), 403, "tenant"},
		{"invalid tenant", sign(t, iss.key, iss.kid, with("tenant", "../alice")), 403, "tenant"},
		{"tenant not a string", sign(t, iss.key, iss.kid, with("tenant", []string{"alice"})), 403, "tenant"},
		{"unknown tenant", sign(t, iss.key, iss.kid, with("tenant", "carol")), 403, "unknown tenant"},
	} {
		header := map[string]string{}
		if c.token != "" {
			header["Authorization"] = "Bearer " + c.token
		}
		resp, body := post(t, s.url, callView, header)
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d and %q", c.name, resp.StatusCode, body, c.status, c.body)
		}
		if c.status == 401 && resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+s.oauth.MetadataURL()+`"` {
			t.Errorf("%s: WWW-Authenticate %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// A valid token still works after all that.
	if resp, body := post(t, s.url, callView, map[string]string{"Authorization": "Bearer " + sign(t, iss.key, iss.kid, good())}); resp.StatusCode != 200 {
		t.Errorf("valid token: %d %q", resp.StatusCode, body)
	}
}

// hmacToken is a token whose header says HS256, "signed" with the
// issuer's public key as the secret: the algorithm-confusion attack.
func hmacToken(t *testing.T, iss *testIssuer, claims map[string]any) string {
	t.Helper()
	pub, err := json.Marshal(jose.JSONWebKey{Key: &iss.key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	head := rawPart(map[string]any{"alg": "HS256", "typ": "JWT", "kid": iss.kid})
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
	iss := newIssuer(t)
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
	if meta.Resource != s.resource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss.url ||
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
	} {
		if _, err := mcpserver.NewOAuth(cfg); err == nil {
			t.Errorf("NewOAuth(%+v) accepted", cfg)
		}
	}
}
