package remotestore_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/memtool/memtool"
)

// TestRedirectAfterForwarding: a proxy that forwarded a change and then
// answers with a redirect (nginx's error_page with a URL turns the 502
// or 504 it gives after forwarding into a 302 to that page; a 3xx with
// no Location is as unknown) does not know whether the change was made,
// and neither does the client: the error wraps ErrOutcomeUnknown, never
// one that says nothing changed.
func TestRedirectAfterForwarding(t *testing.T) {
	answers := map[string]func(w http.ResponseWriter){
		"302 to an error page": func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://status.example.com/50x.html")
			w.WriteHeader(http.StatusFound)
		},
		"307 back": func(w http.ResponseWriter) {
			w.Header().Set("Location", "/v1/file")
			w.WriteHeader(http.StatusTemporaryRedirect)
		},
		"300 without Location": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusMultipleChoices)
		},
	}
	for what, answer := range answers {
		for _, c := range changes {
			t.Run(what+"/"+c.name, func(t *testing.T) {
				inner, api := withFile(t, "old")
				inner.Mkdir(t.Context(), "d")
				s := open(t, madeThen(api, answer), nil)
				if err := c.do(t.Context(), s); !errors.Is(err, memtool.ErrOutcomeUnknown) {
					t.Errorf("%s answered %q by a proxy that forwarded it: %v; want ErrOutcomeUnknown", c.name, what, err)
				}
			})
		}
	}
}
