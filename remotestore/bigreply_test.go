package remotestore_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/remotestore"
)

// padded is api, whose every success is sent with n spaces after its
// body: JSON that decodes as the API's answer, as long as a hostile or
// broken server likes.
func padded(api http.Handler, n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code < 300 && rec.Header().Get("Content-Type") == "application/json" {
			body = append(body, bytes.Repeat([]byte(" "), n)...)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// TestLongAnswerIsNoAnswer: an answer is read only up to a bound, as a
// file's content is read only up to the limit asked for: an answer of
// the API padded past it (a hostile or broken server, which could send
// one without end and fill the client's memory) is an error, and a
// change it answers wraps ErrOutcomeUnknown. An answer within the bound
// is read as ever.
func TestLongAnswerIsNoAnswer(t *testing.T) {
	const entry, list = 1 << 10, 4 << 10
	defer remotestore.SetAnswerLimits(entry, list)()
	ctx := t.Context()
	for _, c := range []struct {
		name   string
		pad    int // the most padding the answer may have
		change bool
		do     func(context.Context, *remotestore.Store) error
	}{
		{"Stat", entry - 100, false, func(ctx context.Context, s *remotestore.Store) error {
			_, err := s.Stat(ctx, "f.md")
			return err
		}},
		{"ReadDir", list - 200, false, func(ctx context.Context, s *remotestore.Store) error {
			_, err := s.ReadDir(ctx, "")
			return err
		}},
		{"Tenants", list - 100, false, func(ctx context.Context, s *remotestore.Store) error {
			_, err := s.Tenants(ctx)
			return err
		}},
		{"WriteFile", entry - 200, true, func(ctx context.Context, s *remotestore.Store) error {
			return s.WriteFile(ctx, "f.md", []byte("new"), memtool.Replace)
		}},
		{"Mkdir", entry - 100, true, func(ctx context.Context, s *remotestore.Store) error {
			err := s.Mkdir(ctx, "d")
			if errors.Is(err, memtool.ErrExist) {
				err = nil
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, api := withFile(t, "old")
			if err := c.do(ctx, open(t, padded(withTenants(api), c.pad), nil)); err != nil {
				t.Fatalf("an answer within the bound: %s = %v", c.name, err)
			}
			_, api = withFile(t, "old")
			err := c.do(ctx, open(t, padded(withTenants(api), list+1), nil))
			if err == nil {
				t.Fatalf("an answer past the bound: %s = nil", c.name)
			}
			if c.change && !errors.Is(err, memtool.ErrOutcomeUnknown) {
				t.Errorf("an answer past the bound: %s = %v, want ErrOutcomeUnknown", c.name, err)
			}
		})
	}
}

// withTenants is api, with GET /v1/tenants answered as memtool serve
// answers it (the resource API alone has no tenants).
func withTenants(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/tenants" {
			api.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"tenants":["alice","bob"]}` + "\n"))
	})
}
