package remotestore_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
)

// changes are the Store's changes, each on the store that withFile
// makes (f.md holds "old"), with the directory d.
var changes = []struct {
	name string
	do   func(ctx context.Context, s *remotestore.Store) error
}{
	{"WriteFile", func(ctx context.Context, s *remotestore.Store) error {
		return s.WriteFile(ctx, "f.md", []byte("new\n"), memtool.Replace)
	}},
	{"WriteFile(CreateOnly)", func(ctx context.Context, s *remotestore.Store) error {
		return s.WriteFile(ctx, "g.md", []byte("new\n"), memtool.CreateOnly)
	}},
	{"Update", func(ctx context.Context, s *remotestore.Store) error {
		return s.Update(ctx, "f.md", 100, func(old []byte) ([]byte, error) { return append(old, '+'), nil })
	}},
	{"Mkdir", func(ctx context.Context, s *remotestore.Store) error { return s.Mkdir(ctx, "e") }},
	{"Remove", func(ctx context.Context, s *remotestore.Store) error { return s.Remove(ctx, "f.md") }},
	{"RemoveAll", func(ctx context.Context, s *remotestore.Store) error { return s.RemoveAll(ctx, "d") }},
	{"Rename", func(ctx context.Context, s *remotestore.Store) error { return s.Rename(ctx, "f.md", "h.md") }},
}

// TestGatewayFailureAfterForwarding: a proxy in front of the server that
// forwarded a change and then answers with its own 5xx (502 when the
// server's connection broke, 504 when it tired of waiting) does not know
// whether the change was made, and neither does the client: the error
// wraps ErrOutcomeUnknown, never one that says nothing changed. The
// server's own failures (a coded error of the API, or the server's
// {"error": "…"} before the API) still say what they say.
func TestGatewayFailureAfterForwarding(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusServiceUnavailable} {
		for _, c := range changes {
			t.Run(http.StatusText(status)+"/"+c.name, func(t *testing.T) {
				inner, api := withFile(t, "old")
				inner.Mkdir(t.Context(), "d")
				s := open(t, madeThen(api, func(w http.ResponseWriter) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(status)
					w.Write([]byte("<html><h1>" + http.StatusText(status) + "</h1></html>"))
				}), nil)
				if err := c.do(t.Context(), s); !errors.Is(err, memtool.ErrOutcomeUnknown) {
					t.Errorf("%s answered %d by a proxy that forwarded it: %v; want ErrOutcomeUnknown", c.name, status, err)
				}
			})
		}
	}
	t.Run("the server's own 503", func(t *testing.T) {
		_, api := withFile(t, "old")
		s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				api.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"the key store cannot be reached"}`))
		}), nil)
		for _, c := range changes {
			if err := c.do(t.Context(), s); err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("%s refused by the server before the API: %v; want an error that is not ErrOutcomeUnknown", c.name, err)
			}
		}
	})
}
