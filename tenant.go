package memtool

import (
	"context"
	"errors"
	"fmt"
)

// A tenant is one isolated memory (of one user, one agent) in a store that
// holds many. The application chooses the tenant id, never the model: no
// command can name, see or reach another tenant.

// MaxTenantLen is the longest tenant id, in bytes.
const MaxTenantLen = 64

// ValidateTenant reports whether id may name a tenant: 1 to 64 bytes of
// lower-case ASCII letters, digits, '.', '_' and '-', starting with a letter
// or a digit. So an id is never "." or "..", never holds a separator, and
// two ids that differ only in case cannot both exist.
func ValidateTenant(id string) error {
	if id == "" {
		return fmt.Errorf("invalid tenant id: empty")
	}
	if len(id) > MaxTenantLen {
		return fmt.Errorf("invalid tenant id: longer than %d bytes", MaxTenantLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return fmt.Errorf("invalid tenant id %q: only a-z, 0-9 and (not first) '.', '_', '-' are allowed", id)
		}
	}
	return nil
}

// Tenanted is the optional capability of a store that holds many tenants.
//
// Tenant returns the store of tenant id, which must pass ValidateTenant:
// its root is the tenant's /memories, and nothing it does reads, lists,
// changes or reveals another tenant's entries. A store is single-tenant or
// multi-tenant for good: the first Tenant call marks an unused store
// multi-tenant; once a store has been changed without a tenant (a read of
// an unused store, which finds it empty, decides nothing), Tenant fails
// with an error wrapping ErrTenancy, and once it is multi-tenant, the store
// itself (the tenant-less view) fails every method that way. An
// implementation that can hold no tenants (a Wrapper over a store that is
// not Tenanted) returns an error wrapping errors.ErrUnsupported; callers
// then behave as if it were not Tenanted.
type Tenanted interface {
	Tenant(ctx context.Context, id string) (Store, error)
}

// ErrTenancy: the store is single-tenant and a tenant was asked for, or it
// is multi-tenant and was used without one.
var ErrTenancy = errors.New("tenancy mismatch")

// TenancyError returns the error for a mismatch: multi says whether the
// store is multi-tenant.
func TenancyError(multi bool) error {
	if multi {
		return fmt.Errorf("%w: the store is multi-tenant; name a tenant", ErrTenancy)
	}
	return fmt.Errorf("%w: the store is single-tenant; it has no tenants", ErrTenancy)
}

// TenantLister is the optional capability of listing a multi-tenant store's
// tenants.
//
// Tenants returns the ids of the tenants that hold at least one entry, each
// once, in byte order; a tenant that was named but holds nothing may be
// left out. An unused store has none (nil, nil); a single-tenant store
// fails with an error wrapping ErrTenancy. An implementation that cannot
// list (a Wrapper over a store without TenantLister) returns an error
// wrapping errors.ErrUnsupported.
type TenantLister interface {
	Tenants(ctx context.Context) ([]string, error)
}
