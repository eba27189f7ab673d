package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// TestChangesTakeNoPrecondition: a rename, a mkdir or a revert that
// carries If-Match or If-None-Match is refused (bad_request) and changes
// nothing, as a DELETE is: none is one conditional step of a Store, and
// done unconditionally it would be reported as made although the
// condition the client set was never checked.
func TestChangesTakeNoPrecondition(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	s := history.New(inner, nil)
	srv := serveStore(t, s, true, nil)
	for _, content := range []string{"one", "two"} {
		if err := s.WriteFile(ctx, "f.md", []byte(content), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	stale := resource.ETag([]byte("other"))
	for _, h := range []http.Header{
		{"If-Match": {stale}},
		{"If-Match": {""}},
		{"If-None-Match": {"*"}},
	} {
		wantError(t, mustDo(t, srv, "POST", "/v1/rename", h, []byte(`{"from":"/memories/f.md","to":"/memories/g.md"}`)), http.StatusBadRequest, "bad_request")
		wantError(t, mustDo(t, srv, "POST", "/v1/revert"+p("/memories/f.md", "n", "1"), h, nil), http.StatusBadRequest, "bad_request")
		wantError(t, mustDo(t, srv, "POST", "/v1/dir"+p("/memories/d", "parents", "true"), h, nil), http.StatusBadRequest, "bad_request")
		if got := storetest.ReadText(t, s, "f.md"); got != "two" {
			t.Fatalf("with %v: f.md holds %q", h, got)
		}
		if entries, _ := s.ReadDir(ctx, ""); len(entries) != 1 {
			t.Fatalf("with %v: the store holds %v", h, entries)
		}
	}
}
