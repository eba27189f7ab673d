package resource_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// TestRenameIntoMissingDirectory: a rename to a path whose directory is
// not there is not_found (404) naming that directory, not the file to
// move, which is there and stays; with the directory made, it moves.
func TestRenameIntoMissingDirectory(t *testing.T) {
	fsStore, err := filestore.Open(filepath.Join(t.TempDir(), "m"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsStore.Close() })
	for name, s := range map[string]memtool.Store{"memstore": memstore.New(), "filestore": fsStore} {
		t.Run(name, func(t *testing.T) {
			srv := serveStore(t, s, true, nil)
			if err := s.WriteFile(t.Context(), "a.md", []byte("kept"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			e := wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/a.md","to":"/memories/x/y/b.md"}`)), http.StatusNotFound, "not_found")
			if e != nil && (strings.Contains(e.Message, "a.md") || !strings.Contains(e.Message, "/memories/x/y")) {
				t.Errorf("the 404 says %q; want it to name /memories/x/y, not the file to move", e.Message)
			}
			if got := storetest.ReadText(t, s, "a.md"); got != "kept" {
				t.Errorf("a.md holds %q", got)
			}
			wantError(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/none.md","to":"/memories/b.md"}`)), http.StatusNotFound, "not_found")
			wantStatus(t, mustDo(t, srv, "POST", "/v1/dir"+p("/memories/x/y", "parents", "true"), nil, nil), http.StatusCreated)
			wantStatus(t, mustDo(t, srv, "POST", "/v1/rename", nil, []byte(`{"from":"/memories/a.md","to":"/memories/x/y/b.md"}`)), http.StatusNoContent)
			if got := storetest.ReadText(t, s, "x/y/b.md"); got != "kept" {
				t.Errorf("x/y/b.md holds %q", got)
			}
		})
	}
}
