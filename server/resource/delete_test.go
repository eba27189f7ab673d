package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// TestDeleteRefusesEveryPrecondition: a DELETE that carries If-Match or
// If-None-Match is refused however the header is spelt (empty, or given
// twice with an empty first value), never done unconditionally.
func TestDeleteRefusesEveryPrecondition(t *testing.T) {
	s, srv := newServer(t, true)
	if err := s.WriteFile(t.Context(), "f.md", []byte("kept"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	stale := resource.ETag([]byte("other"))
	for _, h := range []http.Header{
		{"If-Match": {""}},
		{"If-Match": {"", stale}},
		{"If-None-Match": {""}},
		{"If-None-Match": {"", "*"}},
	} {
		wantError(t, mustDo(t, srv, "DELETE", "/v1/entry"+p("/memories/f.md"), h, nil), http.StatusBadRequest, "bad_request")
		if got := storetest.ReadText(t, s, "f.md"); got != "kept" {
			t.Fatalf("DELETE with %v: the file holds %q", h, got)
		}
	}
}
