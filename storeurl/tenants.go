package storeurl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"sync"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// Tenants returns the tenants of the multi-tenant store at rawURL, as
// memtool.TenantLister does: none (nil, nil) for an unused store, an error
// wrapping memtool.ErrTenancy for a single-tenant one. A store that cannot
// list its tenants (mem:) is an error.
func Tenants(ctx context.Context, rawURL string) ([]string, error) {
	ids, err := tenants(ctx, rawURL)
	if err != nil {
		return nil, redactedError{withHint(err), rawURL}
	}
	return ids, nil
}

func tenants(ctx context.Context, rawURL string) ([]string, error) {
	s, closer, err := openRaw(ctx, rawURL, false)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	tl, ok := s.(memtool.TenantLister)
	if !ok {
		return nil, fmt.Errorf("store %s cannot list its tenants", rawURL)
	}
	return tl.Tenants(ctx)
}

// scopeTenant turns an opened store into the memory to run on: the store
// of tenant, or the store itself if tenant is "". Either way the tenancy
// mode is checked now (a tenant records it on first use; the tenant-less
// store, on its first change). It closes closer when
// it fails.
func scopeTenant(ctx context.Context, s memtool.Store, closer io.Closer, tenant string) (memtool.Store, io.Closer, error) {
	if tenant == "" {
		if _, err := s.Stat(ctx, ""); err != nil {
			closer.Close()
			return nil, nil, err
		}
		return s, closer, nil
	}
	ts, ok := s.(memtool.Tenanted)
	if !ok {
		closer.Close()
		return nil, nil, fmt.Errorf("store: this store has no tenants")
	}
	t, err := ts.Tenant(ctx, tenant)
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return t, closer, nil
}

// tenantExists is nil if the store s lists tenant among its tenants (or
// cannot list them), and a MissingTenantError if not, so that
// an Open that is not to create anything does not claim a tenant (a
// directory store makes the tenant's folder, and an unused store becomes
// multi-tenant for good) for a mistyped id.
func tenantExists(ctx context.Context, s memtool.Store, tenant string) error {
	tl, ok := s.(memtool.TenantLister)
	if !ok {
		return nil
	}
	ids, err := tl.Tenants(ctx)
	if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, fs.ErrPermission) {
		return nil // it cannot tell (a memtool server, to a key that is not an admin key)
	}
	if err != nil {
		return err
	}
	if !slices.Contains(ids, tenant) {
		return MissingTenantError{tenant}
	}
	return nil
}

// A MissingTenantError is Open's error for a tenant the store does not
// have, when Options.Create is false. It matches fs.ErrNotExist.
type MissingTenantError struct{ Tenant string }

func (e MissingTenantError) Error() string        { return "the store has no tenant " + e.Tenant }
func (e MissingTenantError) Is(target error) bool { return target == fs.ErrNotExist }

// OpenTenants opens the store at rawURL to serve many tenants at once, as
// a server does: tenant returns the memory of a tenant (which marks an
// unused store multi-tenant), and every tenant shares the one connection
// pool, file or lock that closer releases. A store without tenants is an
// error, except mem:, where each tenant gets a memory of its own, gone
// when the process exits. The closer also lists the tenants, through the
// store it holds (for mem:, the tenants opened so far), as Tenants would
// by opening the store again.
func OpenTenants(ctx context.Context, rawURL string, opts *Options) (tenant func(ctx context.Context, id string) (memtool.Store, error), closer TenantsCloser, err error) {
	create := opts != nil && opts.Create
	s, raw, err := openRaw(ctx, rawURL, create)
	if err != nil {
		return nil, nil, redactedError{withHint(err), rawURL}
	}
	if _, isMem := s.(*memstore.Store); isMem {
		var mu sync.Mutex
		mems := map[string]memtool.Store{}
		list := func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			return slices.Sorted(maps.Keys(mems)), nil
		}
		return func(_ context.Context, id string) (memtool.Store, error) {
			if err := memtool.ValidateTenant(id); err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if mems[id] == nil {
				mems[id] = memstore.New()
			}
			return mems[id], nil
		}, tenantsCloser{raw, list}, nil
	}
	ts, ok := s.(memtool.Tenanted)
	if !ok {
		raw.Close()
		return nil, nil, fmt.Errorf("store %s has no tenants", Redact(rawURL))
	}
	list := func(ctx context.Context) ([]string, error) {
		tl, ok := s.(memtool.TenantLister)
		if !ok {
			return nil, fmt.Errorf("store %s cannot list its tenants", Redact(rawURL))
		}
		ids, err := tl.Tenants(ctx)
		if err != nil {
			return nil, redactedError{withHint(err), rawURL}
		}
		return ids, nil
	}
	return func(ctx context.Context, id string) (memtool.Store, error) {
		t, err := ts.Tenant(ctx, id)
		if err != nil {
			return nil, redactedError{withHint(err), rawURL}
		}
		return t, nil
	}, tenantsCloser{raw, list}, nil
}

// A TenantsCloser releases the store that OpenTenants opened, and lists
// its tenants.
type TenantsCloser interface {
	io.Closer
	memtool.TenantLister
}

type tenantsCloser struct {
	io.Closer
	list func(ctx context.Context) ([]string, error)
}

func (t tenantsCloser) Tenants(ctx context.Context) ([]string, error) { return t.list(ctx) }
