package remotestore_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
)

// A change whose request reached the server but whose answer never came
// back (the client's timeout struck first) may have been made: the error
// says so (ErrOutcomeUnknown), not that the call was cancelled or timed
// out, and the model is told to look before trying again, never that
// nothing changed. A read that times out is only a timeout, and a server
// that cannot be reached at all changed nothing.
func TestLostAnswerOfAChange(t *testing.T) {
	inner, api := withFile(t, "one\n")
	var muteReads atomic.Bool
	mute := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && !muteReads.Load() {
			api.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(httptest.NewRecorder(), r) // made, but not answered
		<-r.Context().Done()
	})
	s := open(t, mute, &remotestore.Options{Timeout: 300 * time.Millisecond})

	err := s.WriteFile(t.Context(), "f.md", []byte("two\n"), memtool.Replace)
	if !errors.Is(err, memtool.ErrOutcomeUnknown) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WriteFile with its answer lost: %v; want ErrOutcomeUnknown and no timeout in the chain", err)
	}
	if b, _ := inner.ReadFile(t.Context(), "f.md", 100); string(b) != "two\n" {
		t.Fatalf("the server holds %q", b)
	}
	mem := memtool.New(s, nil)
	res := mem.Run(t.Context(), []byte(`{"command":"insert","path":"/memories/f.md","insert_line":0,"insert_text":"zero"}`))
	if !res.IsError || !strings.Contains(res.Text, "may or may not have been made") || strings.Contains(res.Text, "nothing was changed") {
		t.Errorf("the model read %q", res.Text)
	}
	muteReads.Store(true)
	if _, err := s.ReadFile(t.Context(), "f.md", 100); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("a read with its answer lost: %v; want a timeout", err)
	}

	down := httptest.NewServer(api)
	down.Close()
	gone, err := remotestore.Open(down.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	if err := gone.WriteFile(t.Context(), "f.md", []byte("x"), memtool.Replace); err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("a write to a server that is not there: %v; want an error that is not ErrOutcomeUnknown", err)
	}
}
