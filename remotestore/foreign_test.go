package remotestore_test

import (
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
