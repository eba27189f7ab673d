package resource_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// newServer serves the API over a new memstore on loopback, to a caller
// that may write if canWrite.
func newServer(t *testing.T, canWrite bool) (memtool.Store, *httptest.Server) {
	t.Helper()
	s := memstore.New()
	return s, serveStore(t, s, canWrite, nil)
}

func serveStore(t *testing.T, s memtool.Store, canWrite bool, opts *resource.Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(resource.New(func(*http.Request) (memtool.Store, bool, error) { return s, canWrite, nil }, opts))
	t.Cleanup(srv.Close)
	return srv
}

// p is the query of a path.
func p(path string, more ...string) string {
	q := url.Values{"path": {path}}
	for i := 0; i+1 < len(more); i += 2 {
		q.Set(more[i], more[i+1])
	}
	return "?" + q.Encode()
}

// wantError decodes a failed answer's error, failing t unless its status is
// status and its code code.
func wantError(t *testing.T, resp *http.Response, status int, code string) *resource.Error {
	t.Helper()
	b := body(t, resp)
	e := resource.DecodeError(resp.StatusCode, b)
	if resp.StatusCode != status || e.Code != code {
		t.Errorf("%s %s: got %d %s, want %d %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, b, status, code)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
	return e
}

func wantStatus(t *testing.T, resp *http.Response, status int) []byte {
	t.Helper()
	b := body(t, resp)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: got %d %s, want %d", resp.Request.Method, resp.Request.URL, resp.StatusCode, b, status)
	}
	return b
}

func put(t *testing.T, srv *httptest.Server, path, data string, header http.Header) *http.Response {
	return mustDo(t, srv, "PUT", "/v1/file"+p(path), header, []byte(data))
}

// TestPreconditions: If-None-Match: * creates once; If-Match writes only
// over the ETag it names; a failed precondition changes nothing.
func TestPreconditions(t *testing.T) {
	s, srv := newServer(t, true)
	star := http.Header{"If-None-Match": {"*"}}
	wantStatus(t, put(t, srv, "/memories/a.md", "one", star), http.StatusCreated)
	wantError(t, put(t, srv, "/memories/a.md", "two", star), http.StatusPreconditionFailed, "precondition_failed")
	if got := storetest.ReadText(t, s, "a.md"); got != "one" {
		t.Fatalf("after a failed create: %q", got)
	}

	resp := mustDo(t, srv, "GET", "/v1/file"+p("/memories/a.md"), nil, nil)
	etag := resp.Header.Get("ETag")
	if got := string(wantStatus(t, resp, http.StatusOK)); got != "one" || etag != resource.ETag([]byte("one")) {
		t.Fatalf("GET = %q, ETag %s", got, etag)
	}
	for _, stale := range []string{`"0000"`, "W/" + etag, `"` + strings.Trim(etag, `"`) + `x"`} {
		wantError(t, put(t, srv, "/memories/a.md", "lost", http.Header{"If-Match": {stale}}), http.StatusPreconditionFailed, "precondition_failed")
	}
	resp = put(t, srv, "/memories/a.md", "two", http.Header{"If-Match": {`"other", ` + etag}})
	wantStatus(t, resp, http.StatusOK)
	if resp.Header.Get("ETag") != resource.ETag([]byte("two")) || storetest.ReadText(t, s, "a.md") != "two" {
		t.Fatalf("after a matching If-Match: %q, ETag %s", storetest.ReadText(t, s, "a.md"), resp.Header.Get("ETag"))
	}
	// The old tag no longer matches: a second writer with it loses.
	wantError(t, put(t, srv, "/memories/a.md", "three", http.Header{"If-Match": {etag}}), http.StatusPreconditionFailed, "precondition_failed")
	wantStatus(t, put(t, srv, "/memories/a.md", "any", http.Header{"If-Match": {"*"}}), http.StatusOK)

	// If-Match on nothing, or on a directory, never creates.
	wantError(t, put(t, srv, "/memories/new.md", "x", http.Header{"If-Match": {"*"}}), http.StatusPreconditionFailed, "precondition_failed")
	s.Mkdir(t.Context(), "d")
	wantError(t, put(t, srv, "/memories/d", "x", http.Header{"If-Match": {"*"}}), http.StatusPreconditionFailed, "precondition_failed")
	if _, err := s.Stat(t.Context(), "new.md"); !errors.Is(err, memtool.ErrNotExist) {
		t.Fatalf("If-Match created new.md: %v", err)
	}

	// Unconditional: replace.
	wantStatus(t, put(t, srv, "/memories/a.md", "plain", nil), http.StatusOK)
	// Conditional GET.
	resp = mustDo(t, srv, "GET", "/v1/file"+p("/memories/a.md"), http.Header{"If-None-Match": {resource.ETag([]byte("plain"))}}, nil)
	wantStatus(t, resp, http.StatusNotModified)

	// Malformed preconditions are refused, not ignored.
	wantError(t, put(t, srv, "/memories/a.md", "x", http.Header{"If-None-Match": {etag}}), http.StatusBadRequest, "bad_request")
	wantError(t, put(t, srv, "/memories/a.md", "x", http.Header{"If-None-Match": {"*"}, "If-Match": {"*"}}), http.StatusBadRequest, "bad_request")
	wantError(t, mustDo(t, srv, "DELETE", "/v1/entry"+p("/memories/a.md"), http.Header{"If-Match": {etag}}, nil), http.StatusBadRequest, "bad_request")
	if got := storetest.ReadText(t, s, "a.md"); got != "plain" {
		t.Fatalf("a refused request changed a.md: %q", got)
	}
}

// TestReadOnly: a caller that may only read is refused every change with
// 403 forbidden, and can still read.
func TestReadOnly(t *testing.T) {
	s := memstore.New()
	s.WriteFile(t.Context(), "f", []byte("kept"), memtool.CreateOnly)
	srv := serveStore(t, s, false, nil)
	wantError(t, put(t, srv, "/memories/f", "x", nil), http.StatusForbidden, "forbidden")
	wantError(t, put(t, srv, "/memories/g", "x", nil), http.StatusForbidden, "forbidden")
	wantError(t, mustDo(t, srv, "DELETE", "/v1/entry"+p("/memories/f"), nil, nil), http.StatusForbidden, "forbidden")
	wantError(t, mustDo(t, srv, "POST", "/v1/dir"+p("/memories/d"), nil, nil), http.StatusForbidden, "forbidden")
	wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/f","to":"/memories/g"}`)), http.StatusForbidden, "forbidden")
	if got := string(wantStatus(t, mustDo(t, srv, "GET", "/v1/file"+p("/memories/f"), nil, nil), http.StatusOK)); got != "kept" {
		t.Fatalf("read %q", got)
	}
	entries, _ := s.ReadDir(t.Context(), "")
	if len(entries) != 1 || storetest.ReadText(t, s, "f") != "kept" {
		t.Fatalf("a read-only caller changed the store: %v", entries)
	}
}

// TestResolverError: the resolver's *Error is the answer as it is; any
// other error is a 500 that says nothing of it.
func TestResolverError(t *testing.T) {
	answer := error(&resource.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "no valid token"})
	srv := httptest.NewServer(resource.New(func(*http.Request) (memtool.Store, bool, error) { return nil, false, answer }, nil))
	defer srv.Close()
	wantError(t, mustDo(t, srv, "GET", "/v1/entry"+p("/memories"), nil, nil), http.StatusUnauthorized, "unauthorized")
	answer = errors.New("dial tcp 10.0.0.7:5432: connection refused for /srv/secret")
	e := wantError(t, mustDo(t, srv, "GET", "/v1/entry"+p("/memories"), nil, nil), http.StatusInternalServerError, "internal")
	if strings.Contains(e.Message, "10.0.0.7") || strings.Contains(e.Message, "/srv") {
		t.Fatalf("the message shows the resolver's error: %q", e.Message)
	}
	answer = &resource.Error{Code: "no_status", Message: "an Error without a status"}
	wantError(t, mustDo(t, srv, "GET", "/v1/entry"+p("/memories"), nil, nil), http.StatusInternalServerError, "no_status")
	// The document needs no resolver.
	wantStatus(t, mustDo(t, srv, "GET", resource.OpenAPIPath, nil, nil), http.StatusOK)
}

// failing is a store whose every method fails with err: a store failure
// whose text holds a host path.
type failing struct {
	memtool.Store
	err error
}

func (f failing) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	return memtool.FileInfo{}, f.err
}

// TestErrorCodes: each store error is its code and status, named with the
// virtual path only; an unexpected one is internal and its text is not sent.
func TestErrorCodes(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{memtool.ErrNotExist, 404, "not_found"},
		{memtool.ErrExist, 409, "exists"},
		{memtool.ErrNotDir, 409, "not_dir"},
		{memtool.ErrIsDir, 409, "is_dir"},
		{memtool.ErrIrregular, 409, "irregular"},
		{memtool.ErrEscapes, 409, "escapes"},
		{memtool.ErrNotEmpty, 409, "not_empty"},
		{memtool.ErrTooLarge, 413, "too_large"},
		{memtool.ErrNoSpace, 507, "no_space"},
		{memtool.ErrReadOnly, 403, "read_only"},
		{memtool.ErrBusy, 503, "busy"},
		{memtool.Refusal("Memory quota exceeded"), 422, "refused"},
		{errors.New("boom"), 500, "internal"},
	} {
		hostErr := fmt.Errorf("stat /home/alice/memories/x: %w", c.err)
		var log bytes.Buffer
		srv := serveStore(t, failing{memstore.New(), hostErr}, true, &resource.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		resp := mustDo(t, srv, "GET", "/v1/entry"+p("/memories/x"), nil, nil)
		e := wantError(t, resp, c.status, c.code)
		if strings.Contains(e.Message, "/home") {
			t.Errorf("%v: the message shows the store's error: %q", c.err, e.Message)
		}
		var ref memtool.Refusal
		switch {
		case c.code == "refused":
			if !errors.As(e, &ref) || string(ref) != "Memory quota exceeded" {
				t.Errorf("refused: %q does not unwrap to the refusal", e.Message)
			}
		case c.code == "internal":
			if errors.Unwrap(e) != nil {
				t.Errorf("internal unwraps to %v", errors.Unwrap(e))
			}
			if !strings.Contains(log.String(), "boom") {
				t.Errorf("the internal failure was not logged: %q", log.String())
			}
		case !errors.Is(e, c.err):
			t.Errorf("%s does not unwrap to %v", c.code, c.err)
		case !strings.Contains(e.Message, "/memories/x"):
			t.Errorf("%s: message %q does not name the path", c.code, e.Message)
		}
		if c.code == "busy" && resp.Header.Get("Retry-After") == "" {
			t.Errorf("busy without Retry-After")
		}
	}
}

// TestBodyLimit: a body larger than MaxFileBytes (a rename's, than 64 KiB)
// is 413 and writes nothing.
func TestBodyLimit(t *testing.T) {
	s := memstore.New()
	s.WriteFile(t.Context(), "f", []byte("kept"), memtool.CreateOnly)
	srv := serveStore(t, s, true, &resource.Options{MaxFileBytes: 10})
	wantError(t, put(t, srv, "/memories/f", strings.Repeat("x", 11), nil), http.StatusRequestEntityTooLarge, "too_large")
	wantError(t, put(t, srv, "/memories/g", strings.Repeat("x", 11), nil), http.StatusRequestEntityTooLarge, "too_large")
	wantStatus(t, put(t, srv, "/memories/h", strings.Repeat("x", 10), nil), http.StatusOK)
	if _, err := s.Stat(t.Context(), "g"); storetest.ReadText(t, s, "f") != "kept" || !errors.Is(err, memtool.ErrNotExist) {
		t.Fatalf("a body over the limit changed the store")
	}
	// A read limit under the file's size refuses it without sending it.
	wantError(t, mustDo(t, srv, "GET", "/v1/file"+p("/memories/h", "limit", "9"), nil, nil), http.StatusRequestEntityTooLarge, "too_large")
	big := `{"from":"/memories/f","to":"/memories/` + strings.Repeat("y", 70<<10) + `"}`
	wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(big)), http.StatusRequestEntityTooLarge, "too_large")
}

// TestTree: stat, readdir, mkdir, delete and rename, with their failures.
func TestTree(t *testing.T) {
	s, srv := newServer(t, true)
	do := func(method, target, data string) *http.Response {
		var b []byte
		if data != "" {
			b = []byte(data)
		}
		return mustDo(t, srv, method, target, nil, b)
	}
	wantStatus(t, do("POST", "/v1/dir"+p("/memories/a/b", "parents", "true"), ""), http.StatusCreated)
	wantStatus(t, do("POST", "/v1/dir"+p("/memories/a/b", "parents", "true"), ""), http.StatusCreated)
	wantError(t, do("POST", "/v1/dir"+p("/memories/a/b"), ""), 409, "exists")
	wantError(t, do("POST", "/v1/dir"+p("/memories/x/y"), ""), 404, "not_found")
	wantStatus(t, put(t, srv, "/memories/a/f.md", "hello", nil), http.StatusOK)

	var e resource.Entry
	json.Unmarshal(wantStatus(t, do("GET", "/v1/entry"+p("/memories/a/f.md"), ""), 200), &e)
	if e != (resource.Entry{Path: "/memories/a/f.md", Type: "file", Size: 5}) {
		t.Errorf("stat = %+v", e)
	}
	var l resource.Listing
	json.Unmarshal(wantStatus(t, do("GET", "/v1/dir"+p("/memories/a"), ""), 200), &l)
	want := []resource.Entry{{Name: "b", Type: "dir"}, {Name: "f.md", Type: "file", Size: 5}}
	if l.Path != "/memories/a" || fmt.Sprint(l.Entries) != fmt.Sprint(want) {
		t.Errorf("readdir = %+v", l)
	}
	wantError(t, do("GET", "/v1/dir"+p("/memories/a/f.md"), ""), 409, "not_dir")
	wantError(t, do("GET", "/v1/file"+p("/memories/a"), ""), 409, "is_dir")

	wantError(t, do("POST", "/v1/rename", `{"from":"/memories/a/f.md","to":"/memories/a/b"}`), 409, "exists")
	wantError(t, do("POST", "/v1/rename", `{"from":"/memories/a","to":"/memories/a/b/c"}`), 400, "bad_request")
	wantError(t, do("POST", "/v1/rename", `{"from":"/memories","to":"/memories/z"}`), 400, "bad_request")
	wantError(t, do("POST", "/v1/rename", `{"from":"/memories/a","to":"/memories/z","x":1}`), 400, "bad_request")
	wantError(t, do("POST", "/v1/rename", `{"from":"/memories/../etc","to":"/memories/z"}`), 400, "bad_path")
	wantStatus(t, do("POST", "/v1/rename", `{"from":"/memories/a/f.md","to":"/memories/g.md"}`), 204)
	if storetest.ReadText(t, s, "g.md") != "hello" {
		t.Fatal("rename lost the content")
	}

	wantError(t, do("DELETE", "/v1/entry"+p("/memories/a"), ""), 409, "not_empty")
	wantError(t, do("DELETE", "/v1/entry"+p("/memories"), ""), 400, "bad_request")
	wantError(t, do("DELETE", "/v1/entry"+p("/memories/a", "recursive", "maybe"), ""), 400, "bad_request")
	wantStatus(t, do("DELETE", "/v1/entry"+p("/memories/a", "recursive", "true"), ""), 204)
	wantError(t, do("DELETE", "/v1/entry"+p("/memories/a"), ""), 404, "not_found")
	wantStatus(t, do("DELETE", "/v1/entry"+p("/memories/g.md"), ""), 204)
	if entries, _ := s.ReadDir(t.Context(), ""); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}

	// Parameters: missing, repeated.
	wantError(t, do("GET", "/v1/entry", ""), 400, "bad_request")
	wantError(t, do("GET", "/v1/entry?path=/memories&path=/memories/a", ""), 400, "bad_request")
}

// TestDecodeError: the client reads this API's errors, the server's plain
// {"error": "…"} ones and anything else.
func TestDecodeError(t *testing.T) {
	for _, c := range []struct {
		body, code, message string
	}{
		{`{"error":{"code":"not_found","message":"file does not exist: /memories/a"}}`, "not_found", "file does not exist: /memories/a"},
		{`{"error":"missing bearer token"}`, "", "HTTP 401: missing bearer token"},
		{`<html>bad gateway</html>`, "", "HTTP 401 Unauthorized"},
		{`{"error":{"message":"no code"}}`, "", "HTTP 401 Unauthorized"},
	} {
		e := resource.DecodeError(401, []byte(c.body))
		if e.Status != 401 || e.Code != c.code || e.Message != c.message {
			t.Errorf("DecodeError(%s) = %+v", c.body, e)
		}
	}
}
