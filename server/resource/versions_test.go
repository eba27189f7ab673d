package resource_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/limits"
	"github.com/memtool/memtool/server/resource"
)

// TestVersions: with the history policy in the store's stack (under
// another policy, as the CLI stacks them), the versions of a file are
// listed, read and reverted to; without it, the routes say so.
func TestVersions(t *testing.T) {
	stack := limits.New(history.New(backendtest.FileStore(t), nil), &limits.Options{MaxFiles: 100})
	srv := serveStore(t, stack, true, nil)
	const path = "/memories/notes.md"
	wantStatus(t, put(t, srv, path, "one", http.Header{"If-None-Match": {"*"}}), http.StatusCreated)
	wantStatus(t, put(t, srv, path, "two", nil), http.StatusOK)
	wantStatus(t, put(t, srv, path, "three", http.Header{"If-Match": {resource.ETag([]byte("two"))}}), http.StatusOK)
	wantStatus(t, mustDo(t, srv, "DELETE", "/v1/entry"+p(path), nil, nil), http.StatusNoContent)

	var vs resource.Versions
	json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", "/v1/versions"+p(path), nil, nil), http.StatusOK), &vs)
	if vs.Path != path || len(vs.Versions) != 3 {
		t.Fatalf("versions = %+v", vs)
	}
	for i, want := range []struct {
		size int64
		op   string
	}{{3, "write"}, {3, "update"}, {5, "delete"}} {
		if v := vs.Versions[i]; v.N != i+1 || v.Size != want.size || v.Op != want.op || v.Time.IsZero() {
			t.Errorf("version %d = %+v, want size %d op %s", i+1, v, want.size, want.op)
		}
	}
	if got := string(wantStatus(t, mustDo(t, srv, "GET", "/v1/version"+p(path, "n", "1"), nil, nil), http.StatusOK)); got != "one" {
		t.Errorf("version 1 = %q", got)
	}
	wantError(t, mustDo(t, srv, "GET", "/v1/version"+p(path, "n", "9"), nil, nil), 404, "not_found")
	wantError(t, mustDo(t, srv, "GET", "/v1/version"+p(path, "n", "zero"), nil, nil), 400, "bad_request")
	wantError(t, mustDo(t, srv, "GET", "/v1/version"+p(path), nil, nil), 400, "bad_request")
	wantError(t, mustDo(t, srv, "GET", "/v1/versions"+p("/memories/.memtool-history"), nil, nil), 400, "bad_path")

	// Revert brings the deleted file back.
	wantStatus(t, mustDo(t, srv, "POST", "/v1/revert"+p(path, "n", "2"), nil, nil), http.StatusNoContent)
	if got := string(wantStatus(t, mustDo(t, srv, "GET", "/v1/file"+p(path), nil, nil), http.StatusOK)); got != "two" {
		t.Errorf("after revert to 2: %q", got)
	}
	wantError(t, mustDo(t, srv, "POST", "/v1/revert"+p(path, "n", "9"), nil, nil), 404, "not_found")

	// A read-only caller may list but not revert.
	ro := serveStore(t, stack, false, nil)
	wantStatus(t, mustDo(t, ro, "GET", "/v1/versions"+p(path), nil, nil), http.StatusOK)
	wantError(t, mustDo(t, ro, "POST", "/v1/revert"+p(path, "n", "1"), nil, nil), 403, "forbidden")

	// Without the history policy.
	_, plain := newServer(t, true)
	wantError(t, mustDo(t, plain, "GET", "/v1/versions"+p(path), nil, nil), 501, "unsupported")
	wantError(t, mustDo(t, plain, "POST", "/v1/revert"+p(path, "n", "1"), nil, nil), 501, "unsupported")
}

// TestVersionsOfRoot: /memories itself, a directory, has no versions: the
// versions routes answer is_dir, not an internal error.
func TestVersionsOfRoot(t *testing.T) {
	srv := serveStore(t, history.New(backendtest.FileStore(t), nil), true, nil)
	for _, path := range []string{"/memories", "/memories/"} {
		wantError(t, mustDo(t, srv, "GET", "/v1/versions"+p(path), nil, nil), 409, "is_dir")
		wantError(t, mustDo(t, srv, "GET", "/v1/version"+p(path, "n", "1"), nil, nil), 409, "is_dir")
		wantError(t, mustDo(t, srv, "POST", "/v1/revert"+p(path, "n", "1"), nil, nil), 409, "is_dir")
	}
}
