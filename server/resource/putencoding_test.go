package resource_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

// TestPutTakesTheBodyAsIs: a PUT whose body is coded (Content-Encoding
// gzip) or only part of the file (Content-Range) is refused and changes
// nothing: the handler neither decodes nor places a range, so it would
// store the coded bytes, or the part, as the whole file and answer 200.
func TestPutTakesTheBodyAsIs(t *testing.T) {
	s, srv := newServer(t, true)
	if err := s.WriteFile(t.Context(), "f.md", []byte("kept content"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("new content"))
	zw.Close()
	for _, c := range []struct {
		header http.Header
		body   []byte
	}{
		{http.Header{"Content-Encoding": {"gzip"}}, zipped.Bytes()},
		{http.Header{"Content-Encoding": {"identity", "gzip"}}, zipped.Bytes()},
		{http.Header{"Content-Range": {"bytes 0-2/12"}}, []byte("new")},
	} {
		for _, name := range []string{"f.md", "g.md"} {
			wantError(t, mustDo(t, srv, "PUT", "/v1/file"+p("/memories/"+name), c.header, c.body), http.StatusBadRequest, "bad_request")
		}
		if got := storetest.ReadText(t, s, "f.md"); got != "kept content" {
			t.Fatalf("PUT with %v: the file holds %q", c.header, got)
		}
		if _, err := s.Stat(t.Context(), "g.md"); err == nil {
			t.Fatalf("PUT with %v created a file", c.header)
		}
	}
	wantStatus(t, mustDo(t, srv, "PUT", "/v1/file"+p("/memories/f.md"), http.Header{"Content-Encoding": {"identity"}}, []byte("plain")), http.StatusOK)
	if got := storetest.ReadText(t, s, "f.md"); got != "plain" {
		t.Fatalf("an identity-coded PUT wrote %q", got)
	}
}
