package main

import (
	"context"
	"fmt"

	"github.com/memtool/memtool/encrypt"
)

// runRekey re-encrypts every file of an encrypted store (package encrypt)
// with the first key, after a rotation (memtool keygen --rotate),
// including the policies' own entries.
func runRekey(ctx context.Context, env *cliEnv, inv *invocation) int {
	keys, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
	if err != nil {
		return inv.fail(exitUsage, "%v", err)
	}
	// Rekey works on the raw store, below any policy (which would wrap it
	// in a second encryption layer), with the policies' data listed. It
	// takes no --policy.
	raw, closer, err := openRawStore(ctx, env, &inv.sf)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer closer.Close()
	store, err := encrypt.New(raw, keys, &encrypt.Options{Tenant: inv.sf.tenant})
	if err != nil {
		return inv.fail(exitUsage, "%v", err)
	}
	n, err := encrypt.Rekey(ctx, store, policyData...)
	fmt.Fprintf(env.stdout, "re-encrypted %s with key %s\n", plural(n, "file"), keys[0].ID)
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	return exitOK
}
