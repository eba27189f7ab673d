package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/internal/mcpcalls"
	"github.com/memtool/memtool/internal/oauthtest"
)

// These tests run `memtool serve` with OAuth on, against a local
// authorization server whose keys the test makes (internal/oauthtest):
// the real binary fetches them over loopback and verifies real tokens.

// oauthResource is the public URL of /mcp the tests configure: the
// audience of their tokens. The server is reached on loopback, as behind
// a proxy; the audience is only compared, never dialled.
const (
	oauthResource = "https://memory.test/mcp"
	oauthMetadata = "https://memory.test/.well-known/oauth-protected-resource/mcp"
)

// oauthFlags turn OAuth on for iss, with the tenant in the claim "tenant"
// and the scopes mem.read and mem.write.
func oauthFlags(iss *oauthtest.Issuer) []string {
	return []string{"--oauth-issuer", iss.URL, "--oauth-resource", oauthResource, "--oauth-tenant-claim", "tenant",
		"--oauth-read-scope", "mem.read", "--oauth-write-scope", "mem.write"}
}

// postMCP posts an initialize request to /mcp with the bearer token (none
// if empty) and returns the answer, its body read.
func postMCP(t *testing.T, base, path, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+path, strings.NewReader(rawInitialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return send(t, req)
}

// send sends req and returns the answer, its body read.
func send(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := serveClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sortedNames(res.Tools, func(tool *mcp.Tool) string { return tool.Name })
}

// TestServeOAuth: through memtool serve with the --oauth-* flags, a valid
// JWT lists and calls the tools on /mcp, each tenant's tokens reach only
// its memory, a read-scope token changes nothing through any tool, bad
// tokens are refused with a challenge naming the metadata, which is
// served without a token and matches the flags, memtool keys keep
// working beside OAuth, JWTs reach /mcp alone, and the access log names
// the caller but holds no token.
func TestServeOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := tenantBackends()[0].URL(t)
	iss := oauthtest.New(t)
	key := addKey(t, store, "carol", "write")
	p := startServe(t, plainBinary(t), store, oauthFlags(iss)...)

	// The metadata, without a token.
	resp, body := get(t, p.url+"/.well-known/oauth-protected-resource/mcp")
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := json.Unmarshal([]byte(body), &meta); err != nil || resp.StatusCode != 200 || meta.Resource != oauthResource ||
		!slices.Equal(meta.AuthorizationServers, []string{iss.URL}) || !slices.Equal(meta.ScopesSupported, []string{"mem.read", "mem.write"}) {
		t.Errorf("the metadata: %d %s %v", resp.StatusCode, body, err)
	}

	// A write token lists every tool and writes its tenant's memory.
	aliceTok := iss.Token(t, iss.Claims(oauthResource, "alice", "openid mem.write"))
	alice := httpClient(t, p.url+"/mcp", aliceTok)
	if got := toolNames(t, alice); len(got) != 7 {
		t.Errorf("the tools of a write token: %v", got)
	}
	create := func(cs *mcp.ClientSession, path, text string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": path, "file_text": text}})
		if err != nil || res.IsError {
			t.Fatalf("memory_create %s: %v %+v", path, err, res)
		}
	}
	create(alice, "/memories/a.txt", "one\ntwo")
	want := execMemtool(t, `{"command":"view","path":"/memories/a.txt"}`+"\n", "--store", store, "--tenant", "alice")
	res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}})
	var exec answer
	if err != nil || json.Unmarshal([]byte(want), &exec) != nil || exec.IsError || mcpcalls.Result(t, res).Text != exec.Text() {
		t.Errorf("alice's view over OAuth: %v %+v\nexec: %s", err, res, want)
	}

	// Another tenant's token sees only its own memory.
	bob := httpClient(t, p.url+"/mcp", iss.Token(t, iss.Claims(oauthResource, "bob", "mem.write")))
	res, err = bob.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}})
	if err != nil || !res.IsError || strings.Contains(mcpcalls.Result(t, res).Text, "one") {
		t.Errorf("bob viewing alice's file: %v %+v", err, res)
	}
	create(bob, "/memories/b.txt", "bob's")
	res, err = alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories"}})
	if err != nil || res.IsError || strings.Contains(mcpcalls.Result(t, res).Text, "b.txt") || !strings.Contains(mcpcalls.Result(t, res).Text, "a.txt") {
		t.Errorf("alice's listing after bob's create: %v %+v", err, res)
	}

	// Resources too: each tenant lists and reads its own files alone.
	if res, err := bob.ListResources(ctx, nil); err != nil || len(res.Resources) != 1 || res.Resources[0].Name != "/memories/b.txt" {
		t.Errorf("bob's resources: %v %+v", err, res)
	}
	if res, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///memories/a.txt"}); err == nil {
		t.Errorf("bob reading alice's file as a resource: %+v", res.Contents)
	}
	if res, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///memories/a.txt"}); err != nil || res.Contents[0].Text != "one\ntwo" {
		t.Errorf("alice reading her file as a resource: %v %+v", err, res)
	}

	// A read token sees view and search, and no tool changes anything.
	readTok := iss.Token(t, iss.Claims(oauthResource, "alice", "mem.read"))
	reader := httpClient(t, p.url+"/mcp", readTok)
	if got := toolNames(t, reader); !slices.Equal(got, []string{"memory_search", "memory_view"}) {
		t.Errorf("the tools of a read token: %v", got)
	}
	before := execMemtool(t, `{"command":"view","path":"/memories"}`+"\n"+`{"command":"view","path":"/memories/a.txt"}`+"\n", "--store", store, "--tenant", "alice")
	for _, call := range mcpcalls.Writes() {
		if res, err := reader.CallTool(ctx, &call); err == nil {
			t.Errorf("%s with a read token: %+v", call.Name, res)
		}
	}
	// Its call of a tool that writes is a 403 naming the scope it lacks
	// (MCP's step-up authorization); a read memtool key's names the key
	// scope it lacks.
	for _, c := range []struct{ name, token, scope string }{
		{"a read token", readTok, "mem.write"},
		{"a read key", addKey(t, store, "alice", "read"), "write"},
	} {
		req, err := http.NewRequest("POST", p.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/w.txt","file_text":"x"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, body := send(t, req)
		want := `Bearer realm="memtool", error="insufficient_scope", scope="` + c.scope + `", resource_metadata="` + oauthMetadata + `"`
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || got != want {
			t.Errorf("%s writing: %d %q, WWW-Authenticate %q; want 403 and %q", c.name, resp.StatusCode, body, got, want)
		}
	}
	if after := execMemtool(t, `{"command":"view","path":"/memories"}`+"\n"+`{"command":"view","path":"/memories/a.txt"}`+"\n", "--store", store, "--tenant", "alice"); after != before {
		t.Errorf("a read token changed the memory:\nbefore %s\nafter %s", before, after)
	}

	// Bad tokens: 401 with the challenge, or 403: a token without a scope
	// of this server with insufficient_scope and the scope that would do
	// (reading), one without a valid tenant with no error code (RFC 6750
	// has none for it).
	good := func() map[string]any { return iss.Claims(oauthResource, "alice", "mem.write") }
	with := func(k string, v any) map[string]any { c := good(); c[k] = v; return c }
	codes := map[string]string{
		"missing scope":  `Bearer realm="memtool", error="insufficient_scope", scope="mem.read", resource_metadata="` + oauthMetadata + `"`,
		"invalid tenant": `Bearer realm="memtool", resource_metadata="` + oauthMetadata + `"`,
	}
	for _, c := range []struct {
		name   string
		token  string
		status int
	}{
		{"no token", "", 401},
		{"wrong audience", iss.Token(t, with("aud", []string{"https://other.test/mcp"})), 401},
		{"expired", iss.Token(t, with("exp", time.Now().Add(-time.Hour).Unix())), 401},
		{"bad signature", oauthtest.Sign(t, oauthtest.NewKey(t), iss.KeyID, good()), 401},
		{"wrong issuer", iss.Token(t, with("iss", "https://evil.test")), 401},
		{"missing scope", iss.Token(t, with("scope", "openid memory:write")), 403},
		{"invalid tenant", iss.Token(t, with("tenant", "../bob")), 403},
		{"a JWT as a memtool key", "mt_" + aliceTok, 401},
	} {
		resp, body := postMCP(t, p.url, "/mcp", c.token)
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != c.status || !strings.Contains(challenge, `resource_metadata="`+oauthMetadata+`"`) || !strings.HasPrefix(challenge, "Bearer ") {
			t.Errorf("%s: %d %q, WWW-Authenticate %q; want %d and the metadata", c.name, resp.StatusCode, body, challenge, c.status)
		}
		if want, ok := codes[c.name]; ok && challenge != want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", c.name, challenge, want)
		}
		if c.token != "" && strings.Contains(p.log(), c.token) {
			t.Errorf("%s: the log holds the token", c.name)
		}
	}

	// A memtool key still works on /mcp and everywhere; a JWT works on
	// /mcp alone.
	create(httpClient(t, p.url+"/mcp", key), "/memories/c.txt", "carol's")
	if status, answer := mustPost(t, p.url, key, `{"command":"view","path":"/memories/c.txt"}`); status != 200 || !strings.Contains(answer, "carol's") {
		t.Errorf("a memtool key on /v1/memory beside OAuth: %d %s", status, answer)
	}
	for _, path := range []string{"/v1/memory", "/v1/file?path=/memories/a.txt", "/v1/search?q=one"} {
		method := "GET"
		if path == "/v1/memory" {
			method = "POST"
		}
		if status, answer := request(t, method, p.url, path, aliceTok, `{"command":"view","path":"/memories"}`); status != 401 || strings.Contains(answer, "one") {
			t.Errorf("a JWT on %s %s: %d %s, want 401", method, path, status, answer)
		}
	}

	// The access log names the caller, never the token.
	log := p.log()
	if !strings.Contains(log, `"key":"oauth:alice","tenant":"alice"`) || !strings.Contains(log, `"key":"oauth:bob","tenant":"bob"`) {
		t.Errorf("the access log does not name the OAuth callers:\n%s", log)
	}
	if strings.Contains(log, aliceTok) || strings.Contains(log, aliceTok[strings.LastIndexByte(aliceTok, '.')+1:]) {
		t.Error("the log holds a token")
	}
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

// TestServeOAuthRateLimit: OAuth callers share the rate limit of their
// tenant, as a key's requests share the key's.
func TestServeOAuthRateLimit(t *testing.T) {
	t.Parallel()
	iss := oauthtest.New(t)
	p := startServe(t, plainBinary(t), tenantBackends()[0].URL(t), append(oauthFlags(iss), "--rate", "0.001", "--burst", "1")...)
	first, _ := postMCP(t, p.url, "/mcp", iss.Token(t, iss.Claims(oauthResource, "alice", "mem.read")))
	second, _ := postMCP(t, p.url, "/mcp", iss.Token(t, iss.Claims(oauthResource, "alice", "mem.write"))) // another token, the same tenant
	other, _ := postMCP(t, p.url, "/mcp", iss.Token(t, iss.Claims(oauthResource, "bob", "mem.write")))
	if first.StatusCode != 200 || second.StatusCode != http.StatusTooManyRequests || other.StatusCode != 200 {
		t.Errorf("alice, alice again, bob: %d %d %d, want 200 429 200", first.StatusCode, second.StatusCode, other.StatusCode)
	}
}

// TestServeWithoutOAuth: without the flags, a valid JWT opens nothing, no
// challenge names a metadata document, and none is served.
func TestServeWithoutOAuth(t *testing.T) {
	t.Parallel()
	iss := oauthtest.New(t)
	p := startServe(t, plainBinary(t), tenantBackends()[0].URL(t))
	resp, body := postMCP(t, p.url, "/mcp", iss.Token(t, iss.Claims(oauthResource, "alice", "mem.write")))
	if resp.StatusCode != 401 || strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata") {
		t.Errorf("a JWT without OAuth: %d %q %q", resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
	}
	if resp, _ := get(t, p.url+"/.well-known/oauth-protected-resource/mcp"); resp.StatusCode != 404 {
		t.Errorf("the metadata without OAuth: %d, want 404", resp.StatusCode)
	}
}

// TestServeOAuthFlags: a bad --oauth-* value is a usage error (exit 2)
// before anything is opened or served.
func TestServeOAuthFlags(t *testing.T) {
	t.Parallel()
	const iss, res = "https://auth.test", "https://memory.test/mcp"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--oauth-issuer", iss}, "both --oauth-issuer and --oauth-resource"},
		{[]string{"--oauth-resource", res}, "both --oauth-issuer and --oauth-resource"},
		{[]string{"--oauth-tenant-claim", "org"}, "both --oauth-issuer and --oauth-resource"},
		{[]string{"--oauth-issuer", "auth.test", "--oauth-resource", res}, "issuer"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", "memory.test/mcp"}, "resource"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", "https://memory.test/"}, "the public URL of /mcp"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", res, "--oauth-jwks", "file:///keys.json"}, "key set URL"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", res, "--oauth-tenant-claim", ""}, "--oauth-tenant-claim"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", res, "--oauth-read-scope", "a b"}, "--oauth-read-scope"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", res, "--oauth-write-scope", `x"y`}, "--oauth-write-scope"},
		{[]string{"--oauth-issuer", iss, "--oauth-resource", res, "--oauth-read-scope", "m", "--oauth-write-scope", "m"}, "a read token would write"},
	} {
		store := filepath.Join(t.TempDir(), "store")
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard) // a server that started would not end
		cmd := exec.CommandContext(ctx, memtoolBinary(t), append([]string{"serve", "--store", store, "--listen", "127.0.0.1:0"}, c.args...)...)
		cmd.Env = childEnv()
		out, _ := cmd.CombinedOutput()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), c.msg) || strings.Contains(string(out), "serving") {
			t.Errorf("serve %v: exit %d, %s; want %d and %q", c.args, code, out, exitUsage, c.msg)
		}
		if _, err := os.Stat(store); err == nil {
			t.Errorf("serve %v made the store", c.args)
		}
	}
}
