package remotestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/server/resource"
)

// tenantHeader names the tenant an admin key acts on (server.TenantHeader;
// the server package is not imported for one constant).
const tenantHeader = "X-Memtool-Tenant"

var (
	_ memtool.Tenanted     = (*Store)(nil)
	_ memtool.TenantLister = (*Store)(nil)
)

// Tenant returns the memory of tenant id on the server: every request of
// the returned Store names id in X-Memtool-Tenant, which the server honours
// for an admin key only. Tenant asks the server once, so that a key that
// may not act on id fails here, with an error wrapping fs.ErrPermission,
// and not at the first command. A key's own tenant needs no admin key.
// The returned Store shares s's connections; closing either closes them.
// It has no tenants (a tenant has none), as a tenant's store of any other
// store: its Tenant and Tenants fail with memtool.ErrTenancy, never
// reaching or listing the server's other tenants.
func (s *Store) Tenant(ctx context.Context, id string) (memtool.Store, error) {
	if s.tenant != "" {
		return nil, errTenantsTenant("tenant "+id, s.tenant)
	}
	if err := memtool.ValidateTenant(id); err != nil {
		return nil, fmt.Errorf("remote store: %w", err)
	}
	t := *s
	t.tenant = id
	if _, err := t.Stat(ctx, ""); err != nil {
		return nil, tenantError(id, err)
	}
	return &t, nil
}

// tenantError is the error of a request that names tenant id: a 403 of
// the server's authentication (not a read-only key's refusal of a change)
// says that the key may not act on id.
func tenantError(id string, err error) error {
	var e *resource.Error
	if errors.As(err, &e) && e.Status == http.StatusForbidden && e.Code == "" {
		return fmt.Errorf("remote store: tenant %s: %w: the server refused (403): only an admin key may act on a tenant not its own", id, fs.ErrPermission)
	}
	return err
}

// errTenantsTenant is the error of op on the store of tenant, which has
// no tenants.
func errTenantsTenant(op, tenant string) error {
	return fmt.Errorf("remote store: %s: the store of tenant %s is a tenant's: %w", op, tenant, memtool.TenancyError(false))
}

// tenantList is the body of GET /v1/tenants.
type tenantList struct {
	Tenants []string `json:"tenants"`
}

// Tenants lists the server's tenants: GET /v1/tenants, which takes an
// admin key. To any other key the server is one memory, its tenant's: a
// 403 is an error wrapping fs.ErrPermission and memtool.ErrTenancy (as a
// single-tenant store's answer), and so is a server that has no
// /v1/tenants (404). A list that is not of tenant ids, each once, in
// byte order, is malformed: an error.
func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	if s.tenant != "" {
		return nil, errTenantsTenant("tenants", s.tenant)
	}
	_, _, data, err := s.do(ctx, call{op: "tenants", method: "GET", route: "/v1/tenants", want: http.StatusOK, list: true})
	var e *resource.Error
	switch {
	case errors.As(err, &e) && e.Status == http.StatusForbidden:
		return nil, fmt.Errorf("remote store: %w: listing tenants takes an admin key (%w: this key sees its own memory only)", fs.ErrPermission, memtool.ErrTenancy)
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		return nil, fmt.Errorf("remote store: %w: the server lists no tenants", memtool.ErrTenancy)
	case errors.As(err, &e) && e.Status == http.StatusNotImplemented:
		return nil, fmt.Errorf("remote store: %w: the server's store cannot list its tenants", errors.ErrUnsupported)
	case err != nil:
		return nil, err
	}
	var l tenantList
	if err := json.Unmarshal(data, &l); err != nil || l.Tenants == nil {
		return nil, fmt.Errorf("remote store: malformed list of tenants")
	}
	for i, id := range l.Tenants {
		// Tenant ids, each once, in byte order, as TenantLister promises:
		// anything else (an escape sequence memtool tenants would print,
		// a path) is not the API's answer, and is not passed on.
		if memtool.ValidateTenant(id) != nil || i > 0 && id <= l.Tenants[i-1] {
			return nil, fmt.Errorf("remote store: malformed list of tenants: not tenant ids, each once, in order")
		}
	}
	if len(l.Tenants) == 0 {
		return nil, nil // as an unused store's
	}
	return l.Tenants, nil
}
