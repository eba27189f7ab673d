package resource_test

import (
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/memstore"
)

// TestWriteRoot: a PUT to /memories itself, the root directory, is is_dir
// (409) on every store (412 with a precondition, which a directory never
// meets), and leaves the root as it was. Over a memstore (memtool serve --store mem:) it used to
// answer 200 and keep a file with an empty name in the root, which the
// model's view then shows as /memories/.
func TestWriteRoot(t *testing.T) {
	for name, s := range map[string]memtool.Store{"memstore": memstore.New(), "file": backendtest.FileStore(t)} {
		srv := serveStore(t, s, true, nil)
		for _, path := range []string{"/memories", "/memories/"} {
			wantError(t, put(t, srv, path, "x", nil), http.StatusConflict, "is_dir")
			for _, h := range []http.Header{{"If-None-Match": {"*"}}, {"If-Match": {"*"}}} {
				wantError(t, put(t, srv, path, "x", h), http.StatusPreconditionFailed, "precondition_failed")
			}
		}
		if fis, err := s.ReadDir(t.Context(), ""); err != nil || len(fis) != 0 {
			t.Errorf("%s: after PUTs to the root, it holds %v (%v)", name, fis, err)
		}
	}
}
