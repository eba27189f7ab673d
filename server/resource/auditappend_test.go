package resource_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
)

// TestAuditLogWhileAppended: a log read while the audit policy appends a
// line holds the start of that line without its newline; the answer is
// the entries written whole, not a damaged log (500). A line in the
// middle that is not an entry still is one (a line cut off by a failed
// write, which audit.Read skips, is not such a line).
func TestAuditLogWhileAppended(t *testing.T) {
	var log lockedBuffer
	store := audit.New(memstore.New(), &log, &audit.Options{Tenant: "mine"})
	for _, name := range []string{"a.md", "b.md"} {
		if err := store.WriteFile(t.Context(), name, []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	whole := log.String()
	last := whole[strings.LastIndexByte(whole[:len(whole)-1], '\n')+1:]
	text := whole + last[:len(last)/2] // the next line, half written
	srv := httptest.NewServer(resource.New(func(*http.Request) (memtool.Store, bool, error) { return store, true, nil }, &resource.Options{
		Audit: func(*http.Request) (io.ReadCloser, audit.Filter, error) {
			return io.NopCloser(strings.NewReader(text)), audit.Filter{Tenant: "mine"}, nil
		},
	}))
	defer srv.Close()
	var pg resource.AuditPage
	if err := json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", "/v1/audit", nil, nil), http.StatusOK), &pg); err != nil {
		t.Fatal(err)
	}
	if len(pg.Entries) != 2 || pg.Entries[1].Path != "/memories/b.md" {
		t.Fatalf("entries: %+v", pg.Entries)
	}
	text = "not an entry\n" + whole
	wantError(t, mustDo(t, srv, "GET", "/v1/audit", nil, nil), http.StatusInternalServerError, "internal")
}
