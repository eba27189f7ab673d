package remotestore_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
)

// TestForeignFile: a read answered with another file's content (a proxy's
// cache that keys on the route, not the query) is refused, never taken
// for the file asked for: its ETag is right for the bytes it came with,
// so only the path the answer names tells them apart. An Update does not
// write its edit of the other file's content over this one.
func TestForeignFile(t *testing.T) {
	ctx := t.Context()
	inner, api := withFile(t, "the file asked for\n")
	if err := inner.WriteFile(ctx, "other.md", []byte("another file\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/file" {
			q := r.URL.Query()
			q.Set("path", "/memories/other.md")
			r.URL.RawQuery = url.Values(q).Encode()
		}
		api.ServeHTTP(w, r)
	}), nil)
	if data, err := s.ReadFile(ctx, "f.md", 1000); err == nil {
		t.Errorf("ReadFile(f.md) = %q, nil", data)
	}
	err := s.Update(ctx, "f.md", 1000, func(old []byte) ([]byte, error) { return append(old, "edited\n"...), nil })
	if err == nil {
		t.Errorf("Update(f.md) = nil")
	}
	if data, _ := inner.ReadFile(ctx, "f.md", 1000); string(data) != "the file asked for\n" {
		t.Errorf("f.md holds %q", data)
	}
	if data, err := s.ReadFile(ctx, "other.md", 1000); err != nil || string(data) != "another file\n" {
		t.Errorf("ReadFile(other.md) = %q, %v", data, err)
	}
}

// TestPathHeaderAnyEscaping: the path an answer names is compared once
// unescaped, so a gateway that escapes it otherwise (a "+" as %2B, the
// slashes left as they are, lowercase hex) does not make every read of
// such a name fail; and content that names another path is refused as
// that, also when it is larger than the read's limit.
func TestPathHeaderAnyEscaping(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	if err := inner.WriteFile(ctx, "a+b c.md", []byte("plus\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	api := remotetest.Handler(inner, "")
	header := ""
	s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		q.Set("limit", "1000") // as a cache keeps whole answers
		r.URL.RawQuery = q.Encode()
		api.ServeHTTP(&pathHeader{ResponseWriter: w, path: header}, r)
	}), nil)
	for _, h := range []string{"/memories/a%2Bb%20c.md", "/memories/a+b%20c.md", "%2fmemories%2fa%2bb%20c.md"} {
		header = h
		if data, err := s.ReadFile(ctx, "a+b c.md", 1000); err != nil || string(data) != "plus\n" {
			t.Errorf("with X-Memtool-Path %q: ReadFile = %q, %v", h, data, err)
		}
	}
	header = "/memories/other.md"
	if _, err := s.ReadFile(ctx, "a+b c.md", 2); err == nil || !strings.Contains(err.Error(), "another file's content") {
		t.Errorf("another file's content, over the limit: %v", err)
	}
}

// pathHeader answers with X-Memtool-Path set to path, whatever the
// handler set, as a gateway that rewrites it.
type pathHeader struct {
	http.ResponseWriter
	path  string
	wrote bool
}

func (h *pathHeader) WriteHeader(code int) {
	if !h.wrote && h.Header().Get("X-Memtool-Path") != "" {
		h.Header().Set("X-Memtool-Path", h.path)
	}
	h.wrote = true
	h.ResponseWriter.WriteHeader(code)
}

func (h *pathHeader) Write(b []byte) (int, error) {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}
