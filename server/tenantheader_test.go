package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
)

// A request that gives X-Memtool-Tenant more than once (an empty value
// first, or two tenants) is refused, 400, and changes no tenant's
// memory: it was served for the first value, so an admin key's write
// meant for bob went to the key's own tenant, or to the other one named.
func TestTenantHeaderGivenTwice(t *testing.T) {
	f := newFixture(t, nil)
	_, admin := f.key(t, "ops", keys.Admin)
	_, alice := f.key(t, "alice", keys.Write)
	for _, c := range []struct {
		token  string
		values []string
	}{
		{admin, []string{"", "bob"}},
		{admin, []string{"alice", "bob"}},
		{alice, []string{"alice", "bob"}},
		{alice, []string{"", "bob"}},
	} {
		req, err := http.NewRequest("POST", f.url+"/v1/memory", strings.NewReader(`{"command":"create","path":"/memories/x.md","file_text":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header[server.TenantHeader] = c.values
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s %q: %d %s, want 400", server.TenantHeader, c.values, resp.StatusCode, b)
		}
		f.mu.Lock()
		for tenant, s := range f.stores {
			if _, err := s.Stat(t.Context(), "x.md"); err == nil {
				t.Errorf("%s %q: the write landed in %s", server.TenantHeader, c.values, tenant)
			}
		}
		f.mu.Unlock()
	}
}
