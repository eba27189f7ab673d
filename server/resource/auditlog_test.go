package resource_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
)

// lockedBuffer is an audit log in memory that two stores write at once.
type lockedBuffer struct{ syncbuf.Buffer }

func (b *lockedBuffer) reader() io.ReadCloser { return io.NopCloser(strings.NewReader(b.String())) }

// TestAuditLog: GET /v1/audit serves the caller's tenant's entries of the
// log, filtered, the last ones; another tenant's never.
func TestAuditLog(t *testing.T) {
	var log lockedBuffer
	mine := audit.New(memstore.New(), &log, &audit.Options{Tenant: "mine"})
	theirs := audit.New(memstore.New(), &log, &audit.Options{Tenant: "theirs"})
	theirs.WriteFile(t.Context(), "secret-name.md", []byte("x"), memtool.CreateOnly)
	var sourceErr error
	srv := httptest.NewServer(resource.New(func(*http.Request) (memtool.Store, bool, error) { return mine, true, nil }, &resource.Options{
		Audit: func(*http.Request) (io.ReadCloser, audit.Filter, error) {
			return log.reader(), audit.Filter{Tenant: "mine"}, sourceErr
		},
	}))
	defer srv.Close()
	wantStatus(t, put(t, srv, "/memories/a.md", "one", nil), http.StatusOK)
	wantStatus(t, put(t, srv, "/memories/b.md", "two", nil), http.StatusOK)
	wantStatus(t, mustDo(t, srv, "GET", "/v1/file"+p("/memories/a.md"), nil, nil), http.StatusOK)
	wantError(t, mustDo(t, srv, "GET", "/v1/file"+p("/memories/none.md"), nil, nil), 404, "not_found")

	get := func(query string) []audit.Entry {
		t.Helper()
		var pg resource.AuditPage
		if err := json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", "/v1/audit"+query, nil, nil), http.StatusOK), &pg); err != nil {
			t.Fatal(err)
		}
		for _, e := range pg.Entries {
			if e.Tenant != "mine" {
				t.Fatalf("another tenant's entry: %+v", e)
			}
		}
		return pg.Entries
	}
	ops := func(es []audit.Entry) (out []string) {
		for _, e := range es {
			out = append(out, e.Op+" "+e.Path+" "+e.Outcome)
		}
		return out
	}
	all := get("")
	if len(all) != 4 {
		t.Fatalf("all entries: %q", ops(all))
	}
	if got := ops(get("?op=read")); len(got) != 2 || got[0] != "read /memories/a.md ok" || got[1] != "read /memories/none.md not_exist" {
		t.Errorf("op=read: %q", got)
	}
	if got := ops(get("?path=/memories/b.md")); len(got) != 1 || got[0] != "write /memories/b.md ok" {
		t.Errorf("path=/memories/b.md: %q", got)
	}
	if got := ops(get("?limit=1")); len(got) != 1 || got[0] != "read /memories/none.md not_exist" {
		t.Errorf("limit=1: %q", got)
	}
	if got := get("?outcome=ok&since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z"); len(got) != 3 {
		t.Errorf("outcome=ok with a time range: %q", ops(got))
	}
	wantError(t, mustDo(t, srv, "GET", "/v1/audit?since=yesterday", nil, nil), 400, "bad_request")
	wantError(t, mustDo(t, srv, "GET", "/v1/audit?path=/etc", nil, nil), 400, "bad_path")
	sourceErr = &resource.Error{Status: http.StatusForbidden, Code: "forbidden", Message: "an admin key reads the audit log"}
	wantError(t, mustDo(t, srv, "GET", "/v1/audit", nil, nil), 403, "forbidden")
	sourceErr = nil
	log.Write([]byte("not an entry\n"))
	e := wantError(t, mustDo(t, srv, "GET", "/v1/audit", nil, nil), 500, "internal")
	if errors.Unwrap(e) != nil {
		t.Errorf("a damaged log: %v", e)
	}

	// Without Options.Audit.
	_, plain := newServer(t, true)
	wantError(t, mustDo(t, plain, "GET", "/v1/audit", nil, nil), 501, "unsupported")
}
