package main

import (
	"context"
	"fmt"

	"github.com/memtool/memtool/storeurl"
)

// runTenants lists the tenants of a multi-tenant store, one per line. It
// never creates the store.
func runTenants(ctx context.Context, env *cliEnv, inv *invocation) int {
	url := storeURL(inv.sf.store, env)
	ids, err := listTenants(ctx, url)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	if len(ids) == 0 {
		return inv.fail(exitOK, "store %s has no tenants", storeurl.Redact(url))
	}
	for _, id := range ids {
		if _, err := fmt.Fprintln(env.stdout, id); err != nil {
			return exitBrokenIO
		}
	}
	return exitOK
}
