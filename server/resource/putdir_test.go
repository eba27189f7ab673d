package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

// TestPutToDirectoryPath: a PUT to a path that ends in '/', which names
// a directory, is refused (bad_path) and writes nothing, as the model's
// create is; it wrote a file at the name without the slash.
func TestPutToDirectoryPath(t *testing.T) {
	s, srv := newServer(t, true)
	if err := s.WriteFile(t.Context(), "f.md", []byte("kept"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for _, h := range []http.Header{nil, {"If-None-Match": {"*"}}, {"If-Match": {"*"}}} {
		wantError(t, put(t, srv, "/memories/notes/", "x", h), http.StatusBadRequest, "bad_path")
		wantError(t, put(t, srv, "/memories/f.md/", "x", h), http.StatusBadRequest, "bad_path")
	}
	if _, err := s.Stat(t.Context(), "notes"); err == nil {
		t.Error("a PUT to /memories/notes/ made a file notes")
	}
	if got := storetest.ReadText(t, s, "f.md"); got != "kept" {
		t.Errorf("a PUT to /memories/f.md/ wrote %q", got)
	}
}
