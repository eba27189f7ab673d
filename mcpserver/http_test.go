package mcpserver_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// access is what a static token gives.
type access struct {
	mem   *memtool.Memory
	write bool
}

// staticTokens is the OpenFunc of these tests: a bearer token from the
// map, or 401.
func staticTokens(tokens map[string]access) mcpserver.OpenFunc {
	return func(r *http.Request) (*memtool.Memory, bool, error) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a, found := tokens[tok]
		if !ok || !found {
			return nil, false, mcpserver.ErrUnauthenticated
		}
		return a.mem, a.write, nil
	}
}

// bearer adds a bearer token to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// roundRobin sends each request to the next of several servers, as a load
// balancer without session affinity would.
type roundRobin struct {
	urls []string
	n    atomic.Int64
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	target, err := url.Parse(rr.urls[int(rr.n.Add(1))%len(rr.urls)])
	if err != nil {
		return nil, err
	}
	r.URL.Host, r.Host = target.Host, target.Host
	return http.DefaultTransport.RoundTrip(r)
}

// httpSession connects a go-sdk client to the handler at url (or, if
// there are several, to each in turn) with token.
func httpSession(t testing.TB, token string, urls ...string) *mcp.ClientSession {
	t.Helper()
	rr := &roundRobin{urls: urls}
	transport := &mcp.StreamableClientTransport{
		Endpoint:   urls[0],
		HTTPClient: &http.Client{Transport: &bearer{token, rr}},
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// serve starts n servers of one handler configuration over the same
// tokens, as n processes behind a load balancer.
func serve(t testing.TB, n int, open mcpserver.OpenFunc, opts *mcpserver.HTTPOptions) []string {
	t.Helper()
	var urls []string
	for range n {
		srv := httptest.NewServer(mcpserver.NewHTTPHandler(open, opts))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	return urls
}

// TestHTTPBattery runs the battery over streamable HTTP, each request to
// the next of two servers: stateless mode needs no session affinity.
func TestHTTPBattery(t *testing.T) {
	open := staticTokens(map[string]access{"w": {memtool.New(memstore.New(), nil), true}})
	checkBattery(t, httpSession(t, "w", serve(t, 2, open, nil)...))
}

func TestHTTPReadToken(t *testing.T) {
	mem := seeded(t)
	open := staticTokens(map[string]access{"r": {mem, false}, "w": {mem, true}})
	urls := serve(t, 1, open, nil)
	checkReadOnly(t, func() *mcp.ClientSession { return httpSession(t, "r", urls...) }, mem)
	// The write token of the same memory lists every tool.
	res, err := httpSession(t, "w", urls...).ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 7 {
		t.Fatalf("write token: %v, %d tools", err, len(res.Tools))
	}
}

// post sends one raw JSON-RPC message and returns the answer.
func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	maps.Copy(h, header)
	return send(t, "POST", url, strings.NewReader(body), h)
}

// send sends a method request with body and header (a "Host" key sets the
// Host) to url, and returns the answer with its body read.
func send(t *testing.T, method, url string, body io.Reader, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const callView = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories/a.txt"}}}`

// TestHTTPStateless: a call with no initialize and no session before it is
// answered, and no session is handed out.
func TestHTTPStateless(t *testing.T) {
	open := staticTokens(map[string]access{"w": {seeded(t), true}})
	url := serve(t, 1, open, nil)[0]
	resp, body := post(t, url, callView, map[string]string{"Authorization": "Bearer w", "Mcp-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != 200 || !strings.Contains(body, `one\n`) || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("stateless call: %d %q session %q", resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id"))
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer w")
	req.Header.Set("Accept", "text/event-stream")
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", get.StatusCode)
	}
}

func TestHTTPRefusals(t *testing.T) {
	mem := seeded(t)
	broken := errors.New("store down at /secret/place")
	open := func(r *http.Request) (*memtool.Memory, bool, error) {
		if r.Header.Get("Authorization") == "Bearer broken" {
			return nil, false, broken
		}
		if r.Header.Get("Authorization") == "Bearer other" {
			return nil, false, errors.Join(mcpserver.ErrForbidden, errors.New("this key may not use MCP"))
		}
		return staticTokens(map[string]access{"w": {mem, true}})(r)
	}
	plain := serve(t, 1, open, &mcpserver.HTTPOptions{ResourceMetadataURL: "https://mem.example/.well-known/oauth-protected-resource/mcp"})[0]
	listed := serve(t, 1, open, &mcpserver.HTTPOptions{AllowedHosts: []string{"mem.example"}, AllowedOrigins: []string{"https://app.example"}})[0]
	host := strings.TrimPrefix(plain, "http://")
	for _, c := range []struct {
		name   string
		url    string
		header map[string]string
		status int
		body   string
	}{
		{"no token", plain, nil, 401, "unauthenticated"},
		{"unknown token", plain, map[string]string{"Authorization": "Bearer nope"}, 401, "unauthenticated"},
		{"forbidden", plain, map[string]string{"Authorization": "Bearer other"}, 403, "may not use MCP"},
		{"store failure", plain, map[string]string{"Authorization": "Bearer broken"}, 500, "internal error"},
		{"rebound host", plain, map[string]string{"Authorization": "Bearer w", "Host": "attacker.example"}, 403, "host not allowed"},
		{"rebound host with port", plain, map[string]string{"Authorization": "Bearer w", "Host": "attacker.example:80"}, 403, "host not allowed"},
		{"localhost", plain, map[string]string{"Authorization": "Bearer w", "Host": "localhost"}, 200, "one"},
		{"foreign origin", plain, map[string]string{"Authorization": "Bearer w", "Origin": "https://attacker.example"}, 403, "origin not allowed"},
		{"null origin", plain, map[string]string{"Authorization": "Bearer w", "Origin": "null"}, 403, "origin not allowed"},
		{"own origin", plain, map[string]string{"Authorization": "Bearer w", "Origin": "http://" + host}, 200, "one"},
		{"unlisted host", listed, map[string]string{"Authorization": "Bearer w"}, 403, "host not allowed"},
		{"listed host", listed, map[string]string{"Authorization": "Bearer w", "Host": "MEM.example"}, 200, "one"},
		{"listed origin", listed, map[string]string{"Authorization": "Bearer w", "Host": "mem.example", "Origin": "https://app.example"}, 200, "one"},
		{"unlisted origin", listed, map[string]string{"Authorization": "Bearer w", "Host": "mem.example", "Origin": "http://app.example"}, 403, "origin not allowed"},
	} {
		resp, body := post(t, c.url, callView, c.header)
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) || strings.Contains(body, "/secret/place") {
			t.Errorf("%s: %d %q, want %d and %q", c.name, resp.StatusCode, body, c.status, c.body)
		}
		want := ""
		switch {
		case c.status == 401 && c.header["Authorization"] == "":
			want = `Bearer realm="memtool", resource_metadata="https://mem.example/.well-known/oauth-protected-resource/mcp"`
		case c.status == 401:
			want = `Bearer realm="memtool", error="invalid_token", resource_metadata="https://mem.example/.well-known/oauth-protected-resource/mcp"`
		}
		if got := resp.Header.Get("WWW-Authenticate"); got != want || strings.Contains(body, "nope") {
			t.Errorf("%s: WWW-Authenticate %q, want %q", c.name, got, want)
		}
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/big.txt","file_text":"` + strings.Repeat("x", 2*memtool.MaxInputBytes) + `"}}}`
	if resp, body := post(t, plain, big, map[string]string{"Authorization": "Bearer w"}); resp.StatusCode == 200 || strings.Contains(listing(t, mem), "big.txt") {
		t.Errorf("a body over the limit: %d %.200q", resp.StatusCode, body)
	}
}
