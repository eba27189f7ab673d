package resource_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/server/resource"
)

// TestListingsLeaveOutReservedNames: a store that lists the names the
// storage layer keeps for itself (.memtool…: memtool serve's policy
// record, in the raw store of an SQLite, PostgreSQL or in-memory store)
// does not make the API list a path it refuses to serve. With the
// encryption policy, such a file (the record, kept in plain text) is not
// one the policy opens: the listing of files failed whole on it, and no
// sync client could list the memory.
func TestListingsLeaveOutReservedNames(t *testing.T) {
	for _, b := range backendtest.All() {
		if b.Object {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			raw := b.Open(t)
			// As memtool serve records a tenant's policies, in its raw store.
			if err := raw.WriteFile(t.Context(), ".memtool-policy.json", []byte(`{"version":1,"encrypt":true}`), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			s := backendtest.Encrypted(t, raw)
			if err := s.WriteFile(t.Context(), "a.txt", []byte("hi"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			srv := serveStore(t, s, true, nil)
			if got := paths(listAll(t, srv, "", 10, nil)); !slices.Equal(got, []string{"/memories/a.txt"}) {
				t.Errorf("GET /v1/files: %v, want [/memories/a.txt]", got)
			}
			var l resource.Listing
			json.Unmarshal(wantStatus(t, mustDo(t, srv, "GET", "/v1/dir"+p("/memories"), nil, nil), http.StatusOK), &l)
			for _, e := range l.Entries {
				if e.Name != "a.txt" {
					t.Errorf("GET /v1/dir lists %q, which the API refuses to serve", e.Name)
				}
			}
		})
	}
}
