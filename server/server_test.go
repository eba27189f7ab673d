package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// fixture is a server over memstores (one per tenant) with a keyring in a
// real SQLite file, on a loopback listener.
type fixture struct {
	url    string
	server *server.Server
	ring   *keys.Keyring
	stores map[string]memtool.Store
	log    *syncBuffer
	clock  *testclock.Clock
	mu     sync.Mutex
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct{ syncbuf.Buffer }

// waitFor returns the log once it holds want: a request is logged just
// after its answer is sent.
func (s *syncBuffer) waitFor(t *testing.T, want string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if log := s.String(); strings.Contains(log, want) || time.Now().After(deadline) {
			return log
		}
	}
}

func newFixture(t *testing.T, edit func(*server.Config)) *fixture {
	t.Helper()
	c := testclock.New(time.Now())
	ring, err := keys.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "keys.db"), &keys.Options{Create: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ring.Close() })
	f := &fixture{ring: ring, stores: map[string]memtool.Store{}, log: &syncBuffer{}, clock: c}
	cfg := server.Config{
		Keys: ring,
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.stores[tenant] == nil {
				f.stores[tenant] = memstore.New()
			}
			return f.stores[tenant], nil
		},
		Tenants: func(context.Context) ([]string, error) { return []string{"alice", "bob"}, nil },
		Rate:    -1,
		Logger:  slog.New(slog.NewJSONHandler(f.log, nil)),
		Mount: map[string]http.Handler{"/v1/whoami": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := server.PrincipalFrom(r.Context())
			fmt.Fprintf(w, "%v %s %s %s", ok, p.KeyID, p.Tenant, p.Scope)
		})},
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	f.url, f.server = ts.URL, srv
	return f
}

func (f *fixture) key(t *testing.T, tenant string, scope keys.Scope) (keys.Key, string) {
	t.Helper()
	k, tok, err := f.ring.Add(context.Background(), keys.NewKey{Tenant: tenant, Scope: scope, Expires: f.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return k, tok
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (f *fixture) do(t *testing.T, method, path, token, body string, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

const (
	create = `{"command":"create","path":"/memories/notes.md","file_text":"SECRET of %s\n"}`
	view   = `{"command":"view","path":"/memories/notes.md"}`
)

// The tool endpoint answers as memtool exec does, for the key's tenant.
func TestMemoryEndpoint(t *testing.T) {
	f := newFixture(t, nil)
	_, alice := f.key(t, "alice", keys.Write)
	_, bob := f.key(t, "bob", keys.Write)
	r := f.do(t, "POST", "/v1/memory", alice, fmt.Sprintf(create, "alice"))
	if r.status != 200 || r.body != `{"is_error":false,"content":"File created successfully at: /memories/notes.md"}`+"\n" || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("create: %+v", r)
	}
	r = f.do(t, "POST", "/v1/memory", alice, "[ "+view+", "+view+" ]\n")
	if r.status != 200 || strings.Count(r.body, "SECRET of alice") != 2 || !strings.HasPrefix(r.body, "[{") {
		t.Errorf("a turn: %+v", r)
	}
	// bob's memory is his own: the same path is not there.
	r = f.do(t, "POST", "/v1/memory", bob, view)
	if r.status != 200 || strings.Contains(r.body, "SECRET") || !strings.Contains(r.body, `"is_error":true`) {
		t.Errorf("bob's view of alice's file: %+v", r)
	}
	// Invalid JSON is an in-band error, as in exec.
	r = f.do(t, "POST", "/v1/memory", alice, `{"command":`)
	if r.status != 200 || !strings.HasPrefix(r.body, `{"is_error":true,"content":"Error: `) {
		t.Errorf("bad JSON: %+v", r)
	}
	r = f.do(t, "POST", "/v1/memory", alice, " \n")
	if r.status != 400 {
		t.Errorf("empty body: %+v", r)
	}
	// Every answer, an HTTP error too, has a request id that the log names.
	if id := r.header.Get("X-Request-Id"); len(id) != 16 || !strings.Contains(f.log.waitFor(t, id), `"id":"`+id+`"`) {
		t.Errorf("request id %q; the log:\n%s", id, f.log.String())
	}
}

// Every authenticated route refuses a request without a valid token:
// missing, malformed, unknown, expired, revoked.
func TestUnauthorized(t *testing.T) {
	f := newFixture(t, nil)
	_, alice := f.key(t, "alice", keys.Admin)
	revokedKey, revoked := f.key(t, "alice", keys.Admin)
	if err := f.ring.Revoke(context.Background(), revokedKey.ID); err != nil {
		t.Fatal(err)
	}
	_, expiring := f.key(t, "alice", keys.Admin)
	f.clock.Add(time.Hour)
	_, alice = f.key(t, "alice", keys.Admin) // the first one expired too

	routes := []struct{ method, path, body string }{
		{"POST", "/v1/memory", fmt.Sprintf(create, "x")},
		{"GET", "/v1/tenants", ""},
		{"GET", "/v1/whoami", ""},
	}
	tokens := map[string]string{
		"none": "", "malformed": "mt_nope", "unknown": "mt_0123456789abcdef_" + strings.Repeat("ab", 32),
		"expired": expiring, "revoked": revoked, "other scheme": "",
	}
	for _, rt := range routes {
		for name, tok := range tokens {
			hdr := []string{}
			if name == "other scheme" {
				hdr = []string{"Authorization", "Basic " + alice}
			}
			r := f.do(t, rt.method, rt.path, tok, rt.body, hdr...)
			if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with a %s token: %d %q", rt.method, rt.path, name, r.status, r.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(r.body, "mt_") || (tok != "" && strings.Contains(f.log.String(), tok)) {
				t.Errorf("the token is echoed or logged")
			}
		}
		if r := f.do(t, rt.method, rt.path, alice, rt.body); r.status != 200 {
			t.Errorf("%s %s with a good key: %+v", rt.method, rt.path, r)
		}
	}
	if len(f.stores) != 1 {
		t.Errorf("a refused request opened a memory: %v", f.stores)
	}
}

// A read key views, and its writes are tool errors that change nothing.
func TestReadScope(t *testing.T) {
	f := newFixture(t, nil)
	_, w := f.key(t, "alice", keys.Write)
	_, r := f.key(t, "alice", keys.Read)
	f.do(t, "POST", "/v1/memory", w, fmt.Sprintf(create, "alice"))
	before := f.do(t, "POST", "/v1/memory", r, `{"command":"view","path":"/memories"}`)
	if !strings.Contains(before.body, "notes.md") {
		t.Fatalf("a read key's view: %+v", before)
	}
	for _, in := range []string{
		fmt.Sprintf(create, "mallory"),
		`{"command":"create","path":"/memories/new/deep.md","file_text":"x"}`,
		`{"command":"str_replace","path":"/memories/notes.md","old_str":"SECRET","new_str":"x"}`,
		`{"command":"insert","path":"/memories/notes.md","insert_line":0,"insert_text":"x\n"}`,
		`{"command":"delete","path":"/memories/notes.md"}`,
		`{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/moved.md"}`,
	} {
		got := f.do(t, "POST", "/v1/memory", r, in)
		if got.status != 200 || !strings.Contains(got.body, `"is_error":true`) || !strings.Contains(got.body, "read-only for this API key") {
			t.Errorf("%s with a read key: %+v", in, got)
		}
	}
	after := f.do(t, "POST", "/v1/memory", r, `{"command":"view","path":"/memories"}`)
	if after.body != before.body || !strings.Contains(f.do(t, "POST", "/v1/memory", r, view).body, "SECRET of alice\\n") {
		t.Errorf("a read key changed the memory:\n%s\nwas\n%s", after.body, before.body)
	}
}

// Only an admin key names a tenant, and lists them.
func TestTenantHeader(t *testing.T) {
	f := newFixture(t, nil)
	_, alice := f.key(t, "alice", keys.Write)
	_, admin := f.key(t, "ops", keys.Admin)
	f.do(t, "POST", "/v1/memory", alice, fmt.Sprintf(create, "alice"))
	for _, tenant := range []string{"bob", "ALICE", "../alice", "ops", "alice,bob"} {
		if r := f.do(t, "POST", "/v1/memory", alice, view, server.TenantHeader, tenant); r.status != 403 || strings.Contains(r.body, "SECRET") {
			t.Errorf("a write key naming tenant %q: %+v", tenant, r)
		}
	}
	if r := f.do(t, "POST", "/v1/memory", alice, view, server.TenantHeader, "alice"); r.status != 200 || !strings.Contains(r.body, "SECRET of alice") {
		t.Errorf("a key naming its own tenant: %+v", r)
	}
	if r := f.do(t, "POST", "/v1/memory", admin, view, server.TenantHeader, "alice"); !strings.Contains(r.body, "SECRET of alice") {
		t.Errorf("an admin key on alice: %+v", r)
	}
	if r := f.do(t, "POST", "/v1/memory", admin, view, server.TenantHeader, "../alice"); r.status != 400 {
		t.Errorf("an admin key naming an invalid tenant: %+v", r)
	}
	if r := f.do(t, "GET", "/v1/whoami", admin, "", server.TenantHeader, "bob"); !strings.HasSuffix(r.body, " bob admin") {
		t.Errorf("a mounted handler's principal: %q", r.body)
	}
	if r := f.do(t, "GET", "/v1/tenants", alice, ""); r.status != 403 {
		t.Errorf("a write key listing tenants: %+v", r)
	}
	if r := f.do(t, "GET", "/v1/tenants", admin, ""); r.status != 200 || r.body != `{"tenants":["alice","bob"]}`+"\n" {
		t.Errorf("an admin key listing tenants: %+v", r)
	}
}

// Past its rate, a key gets 429 with Retry-After; other keys do not.
func TestRateLimit(t *testing.T) {
	f := newFixture(t, func(c *server.Config) { c.Rate, c.Burst = 0.001, 2 })
	_, a := f.key(t, "alice", keys.Write)
	_, b := f.key(t, "alice", keys.Write)
	for i := range 2 {
		if r := f.do(t, "POST", "/v1/memory", a, view); r.status != 200 {
			t.Fatalf("request %d within the burst: %d", i, r.status)
		}
	}
	r := f.do(t, "POST", "/v1/memory", a, view)
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.header.Get("Retry-After") == "0" {
		t.Errorf("past the burst: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if r := f.do(t, "POST", "/v1/memory", b, view); r.status != 200 {
		t.Errorf("another key: %d", r.status)
	}
}

// A body over the limit is 413, and runs nothing.
func TestBodyLimit(t *testing.T) {
	f := newFixture(t, func(c *server.Config) { c.MaxBody = 100 })
	_, a := f.key(t, "alice", keys.Write)
	big := fmt.Sprintf(`{"command":"create","path":"/memories/big.md","file_text":"%s"}`, strings.Repeat("x", 100))
	if r := f.do(t, "POST", "/v1/memory", a, big); r.status != 413 {
		t.Errorf("a big body: %+v", r)
	}
	if r := f.do(t, "POST", "/v1/memory", a, `{"command":"view","path":"/memories/big.md"}`); !strings.Contains(r.body, "does not exist") {
		t.Errorf("the big body ran: %+v", r)
	}
}

// Health, readiness, metrics; unknown routes; no CORS.
func TestOperations(t *testing.T) {
	ready := true
	var mu sync.Mutex
	f := newFixture(t, func(c *server.Config) {
		c.Ready = func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if !ready {
				return fmt.Errorf("dial tcp 10.0.0.5:5432: postgres://u:pw@db/x refused")
			}
			return nil
		}
	})
	_, a := f.key(t, "alice", keys.Write)
	f.do(t, "POST", "/v1/memory", a, fmt.Sprintf(create, "alice"))
	f.do(t, "POST", "/v1/memory", a, view)
	f.do(t, "POST", "/v1/memory", a, `{"command":"delete","path":"/memories/nothing"}`)
	f.do(t, "POST", "/v1/memory", "", view)
	if r := f.do(t, "GET", "/healthz", "", ""); r.status != 200 {
		t.Errorf("healthz: %+v", r)
	}
	if r := f.do(t, "GET", "/readyz", "", ""); r.status != 200 {
		t.Errorf("readyz: %+v", r)
	}
	mu.Lock()
	ready = false
	mu.Unlock()
	if r := f.do(t, "GET", "/readyz", "", ""); r.status != 503 || strings.Contains(r.body, "5432") || strings.Contains(r.body, "pw") {
		t.Errorf("readyz of a store that is down: %+v", r)
	}
	m := f.do(t, "GET", "/metrics", "", "").body
	for _, want := range []string{
		`memtool_http_requests_total{command="create",outcome="ok",route="/v1/memory"} 1`,
		`memtool_http_requests_total{command="view",outcome="ok",route="/v1/memory"} 1`,
		`memtool_http_requests_total{command="delete",outcome="tool_error",route="/v1/memory"} 1`,
		`memtool_http_requests_total{command="-",outcome="unauthorized",route="/v1/memory"} 1`,
		`memtool_http_request_duration_seconds_bucket{route="/v1/memory",le="+Inf"} 4`,
		`memtool_http_requests_in_flight 1`, // this request
		`memtool_store_errors_total 1`,      // the readiness failure
		`go_goroutines `,
		`process_cpu_seconds_total `,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	r := f.do(t, "OPTIONS", "/v1/memory", a, "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS answered: %v", r.header)
	}
	if r := f.do(t, "GET", "/v1/nothing", a, ""); r.status != 404 {
		t.Errorf("an unknown route: %+v", r)
	}
	// The access log: one line per request, with an id, never a token or contents.
	log := f.log.waitFor(t, `"route":"other"`)
	if strings.Contains(log, "SECRET") || strings.Contains(log, a) || strings.Contains(log, "mt_") {
		t.Errorf("the log holds contents or a token:\n%s", log)
	}
	var line struct {
		Msg, ID, Route, Key, Tenant, Command, Outcome string
		Status                                        int
	}
	first := strings.SplitN(log, "\n", 2)[0]
	if err := json.Unmarshal([]byte(first), &line); err != nil || line.Msg != "request" || len(line.ID) != 16 || line.Status != 200 || line.Tenant != "alice" || line.Command != "create" {
		t.Errorf("the first log line: %s (%v)", first, err)
	}
}

// A shutdown lets the request in flight finish and answer.
func TestServeShutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	f := newFixture(t, nil)
	_, a := f.key(t, "alice", keys.Write)
	srv, err := server.New(server.Config{
		Keys: f.ring,
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			return slowStore{memstore.New(), started, release}, nil
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, cancel, served := listen(t, srv, "", "")
	answered := make(chan reply, 1)
	g := &fixture{url: "http://" + addr}
	go func() { answered <- g.do(t, "POST", "/v1/memory", a, fmt.Sprintf(create, "alice")) }()
	<-started
	cancel()
	close(release)
	if r := <-answered; r.status != 200 || !strings.Contains(r.body, "File created") {
		t.Errorf("the request in flight: %+v", r)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// slowStore holds its first WriteFile until release is closed.
type slowStore struct {
	memtool.Store
	started, release chan struct{}
}

func (s slowStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	close(s.started)
	<-s.release
	return s.Store.WriteFile(ctx, name, data, mode)
}
