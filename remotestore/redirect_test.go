package remotestore_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
)

// TestRedirectIsNoAnswer: a request answered with a redirect that Go's
// client follows as another request (a change as a GET, for 301, 302 and
// 303; anything to a proxy's sign-in page) fails: a change is never a
// success that changed nothing, and a read never takes another page for
// the file.
func TestRedirectIsNoAnswer(t *testing.T) {
	ctx := t.Context()
	inner, api := withFile(t, "old")
	check := func(t *testing.T, h http.HandlerFunc) {
		s := open(t, h, nil)
		if err := s.WriteFile(ctx, "f.md", []byte("new"), memtool.Replace); err == nil {
			data, _ := inner.ReadFile(ctx, "f.md", 100)
			t.Errorf("WriteFile = nil; the file holds %q", data)
		}
		if err := s.Update(ctx, "f.md", 100, func([]byte) ([]byte, error) { return []byte("new"), nil }); err == nil {
			data, _ := inner.ReadFile(ctx, "f.md", 100)
			t.Errorf("Update = nil; the file holds %q", data)
		}
		if err := s.Remove(ctx, "f.md"); err == nil {
			_, err := inner.Stat(ctx, "f.md")
			t.Errorf("Remove = nil; Stat of the file: %v", err)
		}
		if err := s.Mkdir(ctx, "f.md"); err == nil {
			t.Errorf("Mkdir over a file = nil")
		}
	}
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			// Every change sent on to the API's answer to a read of the
			// same URL.
			check(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					http.Redirect(w, r, r.URL.String(), status)
					return
				}
				api.ServeHTTP(w, r)
			})
		})
	}
	t.Run("sign-in page", func(t *testing.T) {
		signIn := func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/signin" {
				w.Write([]byte("<html>sign in</html>"))
				return
			}
			http.Redirect(w, r, "/signin", http.StatusFound)
		}
		check(t, signIn)
		s := open(t, http.HandlerFunc(signIn), nil)
		if data, err := s.ReadFile(ctx, "f.md", 100); err == nil {
			t.Errorf("ReadFile = %q, nil", data)
		}
	})
}

// roundTripper serves requests in process, with answers that, like those
// of some RoundTrippers, do not name their request.
type roundTripper struct{ h http.Handler }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	rt.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = nil
	return resp, nil
}

// TestAnswerWithoutRequest: a client whose answers do not name their
// request (Options.Client with a RoundTripper of its own) works.
func TestAnswerWithoutRequest(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	api := remotetest.Handler(inner, "")
	s, err := remotestore.Open("http://localhost", &remotestore.Options{Client: &http.Client{Transport: roundTripper{api}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "f.md", []byte("new"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if data, err := s.ReadFile(ctx, "f.md", 100); err != nil || string(data) != "new" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
}
