package main

import (
	"context"
	"fmt"

	"github.com/memtool/memtool/encrypt"
)

// runRekey re-encrypts every file of an encrypted store (package encrypt)
// with the first key, after a rotation (memtool keygen --rotate),
// including the policies' own entries.
func runRekey(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	fs := newFlagSet("rekey", "rekey [--store URL] [--tenant ID]\n\nKeys come from $MEMTOOL_KEY, else the key file $MEMTOOL_KEY_FILE; the first one encrypts.", env, &sf)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) > 0 {
		fmt.Fprintf(env.stderr, "memtool rekey: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	keys, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool rekey: %v\n", err)
		return exitUsage
	}
	// Rekey works on the raw store, below any policy (which would wrap it
	// in a second encryption layer), with the policies' data listed.
	sf.policy = ""
	raw, closer, err := openRawStore(ctx, env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool rekey: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	store, err := encrypt.New(raw, keys, &encrypt.Options{Tenant: sf.tenant})
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool rekey: %v\n", err)
		return exitUsage
	}
	n, err := encrypt.Rekey(ctx, store, policyData...)
	fmt.Fprintf(env.stdout, "re-encrypted %d files with key %s\n", n, keys[0].ID)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool rekey: %v\n", err)
		return exitFailed
	}
	return exitOK
}
