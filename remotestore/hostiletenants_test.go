package remotestore_test

import (
	"net/http"
	"testing"
)

// TestHostileTenants: the tenants a server lists are tenant ids, each
// once, in byte order, as TenantLister promises, or the answer is
// malformed: an id that is not one (a terminal's escape sequence, which
// memtool tenants would print; a path) is never passed on.
func TestHostileTenants(t *testing.T) {
	for _, list := range []string{
		`["bob","alice"]`,
		`["alice","alice"]`,
		`["alice","\u001b[2Jbob"]`,
		`["../alice"]`,
		`["Alice"]`,
		`[""]`,
	} {
		s := open(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"tenants":` + list + `}`))
		}), nil)
		if ids, err := s.Tenants(t.Context()); err == nil {
			t.Errorf("a server listing %s: Tenants = %q, nil", list, ids)
		}
	}
	s := open(t, withTenants(http.NotFoundHandler()), nil)
	if ids, err := s.Tenants(t.Context()); err != nil || len(ids) != 2 || ids[0] != "alice" || ids[1] != "bob" {
		t.Errorf("Tenants = %q, %v; want [alice bob]", ids, err)
	}
}
