package resource_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memtool/memtool/remotestore"
)

// TestUpstreamRefusalIsNotTheCallers: over a remote store (memtool serve
// --store https://…), the upstream server's 401 (the server's own key to
// it is revoked) and 429 (that key's rate limit) were passed on as they
// came: the caller read 401, as if its own key were refused, without a
// WWW-Authenticate challenge, and 429 without Retry-After. Now the
// upstream's rate limit is busy (503, Retry-After), and its refusal of
// the server's key an internal error, logged. Its forbidden (the server's
// key may only read) was passed on too, telling a caller whose key may
// write that it may only read: now it is read_only.
func TestUpstreamRefusalIsNotTheCallers(t *testing.T) {
	for _, c := range []struct {
		name             string
		status           int
		header, body     string
		want             int
		code, retryAfter string
	}{
		{"rate limit", http.StatusTooManyRequests, "Retry-After", `{"error":"rate limit of this API key exceeded"}`, http.StatusServiceUnavailable, "busy", "1"},
		{"key refused", http.StatusUnauthorized, "WWW-Authenticate", `{"error":"invalid, expired or revoked API key"}`, http.StatusInternalServerError, "internal", ""},
		// The server's own key may only read: the store is read-only
		// to it, which is no word on the caller's key.
		{"key reads only", http.StatusForbidden, "X-Other", `{"error":{"code":"forbidden","message":"this key may only read"}}`, http.StatusForbidden, "read_only", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(c.header, "7")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			}))
			defer up.Close()
			remote, err := remotestore.Open(up.URL, &remotestore.Options{Token: "mt_server"})
			if err != nil {
				t.Fatal(err)
			}
			defer remote.Close()
			srv := serveStore(t, remote, true, nil)
			for _, resp := range []*http.Response{
				mustDo(t, srv, "GET", "/v1/file"+p("/memories/a.md"), nil, nil),
				put(t, srv, "/memories/a.md", "x", nil),
			} {
				wantError(t, resp, c.want, c.code)
				if got := resp.Header.Get("Retry-After"); got != c.retryAfter {
					t.Errorf("%s %s: Retry-After %q, want %q", resp.Request.Method, resp.Request.URL, got, c.retryAfter)
				}
			}
		})
	}
}
