package remotestore_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// TestForeignListing: an answer to a stat or a directory's listing that
// is not about the path asked for (a proxy's cache that keys on the
// route, not the query; another service's JSON) is refused, never taken
// for the entry or the directory's entries: a copy or a walk of the tree
// would take them for what is there.
func TestForeignListing(t *testing.T) {
	inner, api := withFile(t, "content")
	inner.Mkdir(t.Context(), "d")
	for name, body := range map[string]string{
		"the root's":    "",
		"not the API's": `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if body != "" {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(body))
					return
				}
				r.URL.RawQuery = url.Values{"path": {"/memories"}}.Encode()
				api.ServeHTTP(w, r)
			}), nil)
			if entries, err := s.ReadDir(t.Context(), "d"); err == nil {
				t.Errorf("ReadDir(d) = %v, nil", entries)
			}
			if fi, err := s.Stat(t.Context(), "d/f.md"); err == nil {
				t.Errorf("Stat(d/f.md) = %+v, nil", fi)
			}
		})
	}
}

// TestWriteOfOtherBytes: a write that reached the server as other bytes
// than those sent (a proxy that rewrites bodies: line ends, a charset)
// is not reported as made: the API's answer names the SHA-256 of what it
// wrote, and it is not that of the data.
func TestWriteOfOtherBytes(t *testing.T) {
	_, api := withFile(t, "old\n")
	s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			body, _ := io.ReadAll(r.Body)
			body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		api.ServeHTTP(w, r)
	}), nil)
	for _, c := range changes[:3] { // WriteFile, WriteFile(CreateOnly), Update
		if err := c.do(t.Context(), s); err == nil {
			t.Errorf("%s of other bytes = nil", c.name)
		}
	}
}
