package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// TestNotModifiedComparesWeakly: a GET's If-None-Match compares tags
// weakly (RFC 9110, 13.1.2), so the current tag marked weak, as a proxy
// that compresses the answer marks it, is 304 too; If-Match on a PUT
// stays strong.
func TestNotModifiedComparesWeakly(t *testing.T) {
	s, srv := newServer(t, true)
	if err := s.WriteFile(t.Context(), "f.md", []byte("one"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	etag := resource.ETag([]byte("one"))
	for _, tag := range []string{etag, "W/" + etag, `"x", W/` + etag} {
		resp := mustDo(t, srv, "GET", "/v1/file"+p("/memories/f.md"), http.Header{"If-None-Match": {tag}}, nil)
		wantStatus(t, resp, http.StatusNotModified)
	}
	for _, tag := range []string{"W/" + resource.ETag([]byte("two")), `W/"` + etag + `"`, "w/" + etag, "W/*"} {
		resp := mustDo(t, srv, "GET", "/v1/file"+p("/memories/f.md"), http.Header{"If-None-Match": {tag}}, nil)
		if got := string(wantStatus(t, resp, http.StatusOK)); got != "one" {
			t.Fatalf("GET with If-None-Match %s = %q", tag, got)
		}
	}
	wantError(t, put(t, srv, "/memories/f.md", "two", http.Header{"If-Match": {"W/" + etag}}), http.StatusPreconditionFailed, "precondition_failed")
	if got := storetest.ReadText(t, s, "f.md"); got != "one" {
		t.Fatalf("a weak If-Match wrote: %q", got)
	}
}
