package remotestore_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server"
	"github.com/memtool/memtool/server/resource"
)

// tenantServer is a memtool server as memtool serve runs it: keys in an
// SQLite keyring, the resource API behind them, a memory per tenant. It
// returns the server's URL and the token of an admin key of tenant ops.
func tenantServer(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	ring, err := keys.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "keys.db"), &keys.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ring.Close() })
	_, admin, err := ring.Add(ctx, keys.NewKey{Tenant: "ops", Scope: keys.Admin})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	stores := map[string]memtool.Store{}
	var srv *server.Server
	api := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
		mem, canWrite, err := srv.Memory(r)
		if err != nil {
			return nil, false, err
		}
		return mem.Store(), canWrite, nil
	}, nil)
	mounts := map[string]http.Handler{}
	for _, p := range resource.Patterns() {
		mounts[p] = api
	}
	srv, err = server.New(server.Config{
		Keys: ring,
		Open: func(_ context.Context, tenant string) (memtool.Store, error) {
			mu.Lock()
			defer mu.Unlock()
			if stores[tenant] == nil {
				stores[tenant] = memstore.New()
			}
			return stores[tenant], nil
		},
		Tenants: func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			var ids []string
			for id := range stores {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			return ids, nil
		},
		Rate:   -1,
		Mount:  mounts,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL, admin
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
