// Package remotetest gives remotestore's tests, and those of the packages
// that open a remote store (storeurl, cmd/memtool), one memtool server:
// the resource API over a store, on loopback.
package remotetest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
)

// Handler is the resource API over s, with write access, for requests
// that bear token (every request when token is ""); any other request is
// answered 401 unauthorized.
func Handler(s memtool.Store, token string) http.Handler {
	return resource.New(func(r *http.Request) (memtool.Store, bool, error) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			return nil, false, &resource.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "no valid token"}
		}
		return s, true, nil
	}, nil)
}

// Server serves Handler(s, token) on loopback until t's test ends and
// returns its URL.
func Server(t testing.TB, s memtool.Store, token string) string {
	t.Helper()
	srv := httptest.NewServer(Handler(s, token))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Open is a remote store that reaches s through Server with token; it is
// closed when t's test ends.
func Open(t testing.TB, s memtool.Store, token string) *remotestore.Store {
	t.Helper()
	r, err := remotestore.Open(Server(t, s, token), &remotestore.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
