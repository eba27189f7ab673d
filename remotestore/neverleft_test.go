package remotestore_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
)

// TestChangeThatNeverLeft: a change that fails before its request is
// sent (the TLS handshake fails, as with an https:// URL of a server that
// speaks plain HTTP; a proxy refuses the tunnel to the server) changed
// nothing, and its error says so: the transport's, not
// ErrOutcomeUnknown, which would have the model look and try again as if
// the change might have been made.
func TestChangeThatNeverLeft(t *testing.T) {
	for _, c := range changes {
		t.Run("plain HTTP server/"+c.name, func(t *testing.T) {
			inner, api := withFile(t, "old")
			inner.Mkdir(t.Context(), "d")
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				api.ServeHTTP(w, r)
			}))
			defer srv.Close()
			s, err := remotestore.Open("https://"+srv.Listener.Addr().String(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := c.do(t.Context(), s); err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("%s over a failed TLS handshake: %v; want an error that is not ErrOutcomeUnknown", c.name, err)
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("the server got %d requests", n)
			}
		})
		t.Run("proxy refuses/"+c.name, func(t *testing.T) {
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no tunnel", http.StatusForbidden)
			}))
			defer proxy.Close()
			pu, _ := url.Parse(proxy.URL)
			client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
			s, err := remotestore.Open("https://memory.example.com", &remotestore.Options{Client: client})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := c.do(t.Context(), s); err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("%s through a proxy that refused the tunnel: %v; want an error that is not ErrOutcomeUnknown", c.name, err)
			}
		})
	}
}
