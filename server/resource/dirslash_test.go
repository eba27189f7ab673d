package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storetest"
)

// TestDirectoryPathOfAFile: a DELETE or a rename whose path ends in '/',
// which names a directory, finds a file there not_dir (409) and changes
// nothing, as the model's delete and rename refuse it; a directory so
// named is removed or moved as usual.
func TestDirectoryPathOfAFile(t *testing.T) {
	s, srv := newServer(t, true)
	ctx := t.Context()
	if err := s.WriteFile(ctx, "f.md", []byte("kept"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ method, target, body string }{
		{"DELETE", "/v1/entry" + p("/memories/f.md/"), ""},
		{"DELETE", "/v1/entry" + p("/memories/f.md/", "recursive", "true"), ""},
		{"POST", "/v1/rename", `{"from":"/memories/f.md/","to":"/memories/g.md"}`},
		{"POST", "/v1/rename", `{"from":"/memories/f.md","to":"/memories/g/"}`},
	} {
		var b []byte
		if req.body != "" {
			b = []byte(req.body)
		}
		wantError(t, mustDo(t, srv, req.method, req.target, nil, b), http.StatusConflict, "not_dir")
		if got := storetest.ReadText(t, s, "f.md"); got != "kept" {
			t.Fatalf("%s %s %s: f.md holds %q", req.method, req.target, req.body, got)
		}
	}
	if entries, _ := s.ReadDir(ctx, ""); len(entries) != 1 {
		t.Fatalf("the store holds %v", entries)
	}
	for _, d := range []string{"d", "e"} {
		if err := s.Mkdir(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	wantStatus(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/d/","to":"/memories/d2/"}`)), http.StatusNoContent)
	wantStatus(t, mustDo(t, srv, "DELETE", "/v1/entry"+p("/memories/e/"), nil, nil), http.StatusNoContent)
	if fi, err := s.Stat(ctx, "d2"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(d2) = %v, %v after the rename of d/", fi, err)
	}
	if _, err := s.Stat(ctx, "e"); err == nil {
		t.Error("e/ was not removed")
	}
}
