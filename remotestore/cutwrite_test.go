package remotestore_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/memtool/memtool"
)

// TestCutAnswerOfAWrite: a write the server made, whose answer (the
// API's 200 or 201 and the entry of the file) ends early without the
// transport noticing (a proxy closes the connection, no length given),
// is not reported as a write that changed nothing: the file was written,
// so the error wraps ErrOutcomeUnknown.
func TestCutAnswerOfAWrite(t *testing.T) {
	for _, c := range changes[:3] { // WriteFile, WriteFile(CreateOnly), Update
		t.Run(c.name, func(t *testing.T) {
			inner, api := withFile(t, "old")
			s := open(t, cutAnswers(t, api, func(r *http.Request) bool { return r.Method == http.MethodPut }), nil)
			if err := c.do(t.Context(), s); !errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("%s = %v; want ErrOutcomeUnknown", c.name, err)
			}
			if data, _ := inner.ReadFile(t.Context(), "f.md", 100); string(data) == "old" {
				if _, err := inner.Stat(t.Context(), "g.md"); err != nil {
					t.Fatalf("the server wrote nothing")
				}
			}
		})
	}
}

// TestForwardedAnsweredByAPage: a proxy that passes a change on and
// answers with a success of its own (a page, 200) leaves the client not
// knowing whether the change was made: every change's error wraps
// ErrOutcomeUnknown.
func TestForwardedAnsweredByAPage(t *testing.T) {
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			inner, api := withFile(t, "old")
			inner.Mkdir(t.Context(), "d")
			s := open(t, madeThen(api, func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<html>Thank you</html>"))
			}), nil)
			if err := c.do(t.Context(), s); !errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("%s = %v; want ErrOutcomeUnknown", c.name, err)
			}
		})
	}
}
