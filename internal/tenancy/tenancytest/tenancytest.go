// Package tenancytest checks what storetest.RunTenants does not: that the
// mode a store claims is its database's, so that another handle on the
// same database (another process) is held to it too, which RunTenants
// cannot check with new stores only; and that a tenant that holds nothing
// is left out of the listing, which the memtool.TenantLister contract
// allows but sqlitestore, pgstore and objectstore promise.
package tenancytest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/memtool/memtool"
)

// Store is a store with tenants, which it lists.
type Store interface {
	memtool.Store
	memtool.Tenanted
	memtool.TenantLister
}

// Opener opens a new handle on one database, as another process would.
type Opener func(t *testing.T) Store

// Check runs the checks on databases newDatabase makes: each call returns
// the Opener of a new, unused database.
func Check(t *testing.T, newDatabase func(t *testing.T) Opener) {
	ctx := context.Background()
	open := newDatabase(t)
	if err := open(t).Mkdir(ctx, "d"); err != nil { // a change without a tenant: single-tenant
		t.Fatal(err)
	}
	again := open(t)
	if _, err := again.Tenant(ctx, "t1"); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenant through another handle on a single-tenant database: %v, want ErrTenancy", err)
	}

	open = newDatabase(t)
	if _, err := open(t).Tenant(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := open(t).ReadDir(ctx, ""); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("tenant-less ReadDir through another handle on a multi-tenant database: %v, want ErrTenancy", err)
	}

	s := newDatabase(t)(t)
	for _, id := range []string{"full", "empty"} {
		ts, err := s.Tenant(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if id == "full" {
			if err := ts.Mkdir(ctx, "d"); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids, err := s.Tenants(ctx)
	if err != nil || !slices.Equal(ids, []string{"full"}) {
		t.Errorf("Tenants = %q, %v; want [full]: a tenant that holds nothing is left out", ids, err)
	}
}
