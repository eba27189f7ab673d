package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// Tenants lists the tenants that hold something, in byte order.
func TestTenants(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.URL(t))
	if ids, err := s.Tenants(ctx); err != nil || ids != nil {
		t.Fatalf("Tenants of an unused database = %q, %v; want none", ids, err)
	}
	for _, id := range []string{"b-2", "a1", "c", "a1"} {
		ts, err := s.Tenant(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.Mkdir(ctx, "d"); err != nil && !errors.Is(err, memtool.ErrExist) {
			t.Fatal(err)
		}
	}
	if _, err := s.Tenant(ctx, "empty"); err != nil { // claimed, holds nothing
		t.Fatal(err)
	}
	ids, err := s.Tenants(ctx)
	if err != nil || !slices.Equal(ids, []string{"a1", "b-2", "c"}) {
		t.Errorf("Tenants = %q, %v; want [a1 b-2 c]", ids, err)
	}

	single := open(t, pgtest.URL(t))
	if err := single.Mkdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := single.Tenants(ctx); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenants of a single-tenant database: %v, want ErrTenancy", err)
	}
}
