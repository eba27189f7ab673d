package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/memtool/memtool/encrypt"
)

// runRekey re-encrypts every file of an encrypted store (package encrypt)
// that is not yet under the first key, after a rotation (memtool keygen
// --rotate), including the policies' own entries. It says the other keys
// may be dropped only when encrypt.Rekey succeeded, that is when its last
// pass over the store found every file under the first key.
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
	newID := keys[0].ID
	fmt.Fprintf(env.stdout, "re-encrypted %s with key %s\n", plural(n, "file"), newID)
	if err != nil {
		return inv.fail(exitFailed, "%v\nNot every file is under key %s yet: keep the other keys, and run memtool rekey again until it succeeds (once every process that writes to the store has key %s first).", err, newID, newID)
	}
	if len(keys) > 1 {
		var old []string
		for _, k := range keys[1:] {
			old = append(old, k.ID)
		}
		inv.fail(exitOK, "a last pass over the store found every file under key %s. The other keys (%s) can be removed once every process that writes to the store has key %s first: one that still has an old key first writes under it (restart it with the new keys, then run memtool rekey again).", newID, strings.Join(old, ", "), newID)
	}
	return exitOK
}
