package remotestore_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
)

// TestRedirectElsewhere: a server that redirects a request, with the
// same method and path, to another server (307 and 308 keep the method
// and the body) gets no token sent there, and no change is made there or
// reported as made; a read never takes the other server's answer for the
// file. Go's client sends Authorization on to a host of the same name
// (another port) or a subdomain, and X-Memtool-Tenant anywhere.
func TestRedirectElsewhere(t *testing.T) {
	ctx := t.Context()
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			other := memstore.New()
			other.WriteFile(ctx, "f.md", []byte("theirs"), memtool.CreateOnly)
			var sawToken, sawTenant atomic.Bool
			api := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
				if r.Header.Get("Authorization") != "" {
					sawToken.Store(true)
				}
				if r.Header.Get("X-Memtool-Tenant") != "" {
					sawTenant.Store(true)
				}
				return other, true, nil
			}, nil)
			elsewhere := httptest.NewServer(api)
			defer elsewhere.Close()
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v1/entry" && r.Method == http.MethodGet {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"path":"/memories","type":"dir","size":0}`))
					return
				}
				http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), status)
			}))
			defer front.Close()
			rs, err := remotestore.Open(front.URL, &remotestore.Options{Token: token})
			if err != nil {
				t.Fatal(err)
			}
			defer rs.Close()
			ts, err := rs.Tenant(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []memtool.Store{rs, ts} {
				if data, err := s.ReadFile(ctx, "f.md", 100); err == nil {
					t.Errorf("ReadFile = %q, nil", data)
				}
				if err := s.WriteFile(ctx, "f.md", []byte("mine"), memtool.Replace); err == nil {
					t.Errorf("WriteFile = nil")
				}
				if err := s.WriteFile(ctx, "g.md", []byte("mine"), memtool.CreateOnly); err == nil {
					t.Errorf("WriteFile(CreateOnly) = nil")
				}
				if err := s.Mkdir(ctx, "d"); err == nil {
					t.Errorf("Mkdir = nil")
				}
				if err := s.(memtool.Renamer).Rename(ctx, "f.md", "h.md"); err == nil {
					t.Errorf("Rename = nil")
				}
				if err := s.Remove(ctx, "f.md"); err == nil {
					t.Errorf("Remove = nil")
				}
			}
			if sawToken.Load() || sawTenant.Load() {
				t.Errorf("the other server got the token (%v) or the tenant (%v)", sawToken.Load(), sawTenant.Load())
			}
			if entries, _ := other.ReadDir(ctx, ""); len(entries) != 1 {
				t.Errorf("the other server's store holds %v", entries)
			}
		})
	}
}
