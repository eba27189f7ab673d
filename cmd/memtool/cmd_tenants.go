package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/memtool/memtool"
)

// runTenants lists the tenants of a multi-tenant store, one per line. It
// never creates the store.
func runTenants(ctx context.Context, env *cliEnv, inv *invocation) int {
	url := storeURL(inv.sf.store, env)
	ids, err := listTenants(ctx, url)
	if err != nil {
		return inv.fail(exitStore, "%v", redactedError{err, url})
	}
	if len(ids) == 0 {
		return inv.fail(exitOK, "store %s has no tenants", redact(url))
	}
	for _, id := range ids {
		if _, err := fmt.Fprintln(env.stdout, id); err != nil {
			return exitBrokenIO
		}
	}
	return exitOK
}

// listTenants returns the tenants of the multi-tenant store at raw, which
// it does not create; none (and no error) for a store that has none yet.
func listTenants(ctx context.Context, raw string) ([]string, error) {
	s, closer, err := openBackend(ctx, raw, false)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	tl, ok := s.(memtool.TenantLister)
	if !ok {
		return nil, fmt.Errorf("store %s cannot list tenants (it has none, or cannot say which); copy them one by one with --tenant ID", raw)
	}
	ids, err := tl.Tenants(ctx)
	if errors.Is(err, memtool.ErrTenancy) {
		return nil, fmt.Errorf("store %s has no tenants: it holds one memory, without tenants", raw)
	}
	return ids, err
}
