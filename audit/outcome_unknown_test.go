package audit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/internal/syncbuf"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
)

// TestOutcomeUnknown: a change whose answer was lost (the server made it,
// then the connection dropped) may or may not have been made; the log
// must not say it failed ("error") nor that it was cancelled, which a
// reader takes for "nothing changed".
func TestOutcomeUnknown(t *testing.T) {
	inner := memstore.New()
	api := remotetest.Handler(inner, "")
	cut := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			api.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(httptest.NewRecorder(), r) // made, but not answered
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
	srv := httptest.NewServer(cut)
	defer srv.Close()
	remote, err := remotestore.Open(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()

	var log syncbuf.Buffer
	s := audit.New(remote, &log, nil)
	err = s.WriteFile(t.Context(), "f.md", []byte("made"), memtool.CreateOnly)
	if !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Fatalf("WriteFile: %v; want ErrOutcomeUnknown", err)
	}
	if b, _ := inner.ReadFile(t.Context(), "f.md", 100); string(b) != "made" {
		t.Fatalf("the server holds %q", b)
	}
	got := entries(t, log.String())
	if len(got) != 1 || got[0].Op != "create" || got[0].Outcome != "unknown" {
		t.Errorf("logged %+v; want one create with outcome unknown", got)
	}
	if o := audit.Outcome(err); o != "unknown" {
		t.Errorf("Outcome(%v) = %q, want unknown", err, o)
	}
}
