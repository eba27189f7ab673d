package remotestore_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/memtool/memtool"
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
