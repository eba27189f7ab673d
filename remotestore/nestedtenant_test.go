package remotestore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server"
)

// tenantServer is keyedServer without a rate limit; it returns the
// server's URL and the token of an admin key of tenant ops.
func tenantServer(t *testing.T) (string, string) {
	t.Helper()
	url, ring, _ := keyedServer(t, func(c *server.Config) { c.Rate = -1 })
	_, admin, err := ring.Add(t.Context(), keys.NewKey{Tenant: "ops", Scope: keys.Admin})
	if err != nil {
		t.Fatal(err)
	}
	return url, admin
}

// TestTenantHasNoTenants: a tenant's store, as any store's Tenant
// returns it, reaches that tenant's memory alone (memtool.Tenanted): it
// has no tenants of its own, so its Tenant and Tenants fail with
// ErrTenancy, as a tenant's store of every other store does, rather than
// reaching and listing the server's other tenants.
func TestTenantHasNoTenants(t *testing.T) {
	ctx := t.Context()
	url, admin := tenantServer(t)
	s, err := remotestore.Open(url, &remotestore.Options{Token: admin})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tenantOf := func(s memtool.Store, id string) (memtool.Store, error) {
		return s.(memtool.Tenanted).Tenant(ctx, id)
	}
	bob, err := tenantOf(s, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.WriteFile(ctx, "secret.md", []byte("bob's"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	alice, err := tenantOf(s, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if other, err := tenantOf(alice, "bob"); !errors.Is(err, memtool.ErrTenancy) {
		data, rerr := other.ReadFile(ctx, "secret.md", 100)
		t.Errorf("alice's store's Tenant(bob) = %v; want ErrTenancy (it reads %q, %v)", err, data, rerr)
	}
	if ids, err := alice.(memtool.TenantLister).Tenants(ctx); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("alice's store's Tenants = %q, %v; want ErrTenancy", ids, err)
	}
	if ids, err := s.Tenants(ctx); err != nil || !slices.Contains(ids, "bob") {
		t.Errorf("the server's Tenants = %q, %v", ids, err)
	}
}
