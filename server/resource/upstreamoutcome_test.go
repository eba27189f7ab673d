package resource_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
)

// TestUpstreamLostAnswerIsOutcomeUnknown: over a remote store whose
// server sits behind a proxy, a change answered with the proxy's own
// failure (502, a page that is not the API's) may have been made; the
// remote store says so (memtool.ErrOutcomeUnknown, wrapping the decoded
// page). The handler passed the proxy's answer on as it came, 502 with
// an empty code, which is none of the API's codes: now it is
// outcome_unknown (500), as the package doc promises; a read's, internal.
func TestUpstreamLostAnswerIsOutcomeUnknown(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>502 Bad Gateway</html>"))
	}))
	defer up.Close()
	remote, err := remotestore.Open(up.URL, &remotestore.Options{Token: "mt_server"})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	srv := serveStore(t, remote, true, nil)
	e := wantError(t, put(t, srv, "/memories/a.md", "x", nil), http.StatusInternalServerError, "outcome_unknown")
	if !errors.Is(e, memtool.ErrOutcomeUnknown) {
		t.Errorf("the answer's error %v does not unwrap to ErrOutcomeUnknown", e)
	}
	// A read's: no change to be unsure of, and no code of the API either.
	wantError(t, mustDo(t, srv, "GET", "/v1/file"+p("/memories/a.md"), nil, nil), http.StatusInternalServerError, "internal")
}
