package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memtool/memtool/keys"
)

// migrateKeys copies the API keys of memtool serve that the source keeps
// beside its memory (DIR.keys, a database's memtool_keys) to the
// target's keyring, so that every token opens the copy as it opens the
// source: a whole store's keys (with --all-tenants or without --tenant),
// else the tenant's own read and write keys (an admin key reaches every
// tenant of the target, so it is not copied with one tenant). Revoked
// and expired keys are copied as they are; a key the target holds from
// an earlier run is revoked there if the source has revoked it since.
//
// It returns what migrate's summary says of them ("" if the source keeps
// none). A target that cannot keep keys (object storage) is told by
// naming the usable keys left behind. An error means that keys were to
// be copied and not all were.
func migrateKeys(ctx context.Context, from, to, tenant string, allTenants bool) (string, error) {
	if keys.Kept(from) != nil {
		return "", nil
	}
	src, err := keys.Open(ctx, from, nil)
	if err != nil {
		return "", fmt.Errorf("the source's API keys: %w", err)
	}
	defer src.Close()
	whole := allTenants || tenant == ""
	keep := func(k keys.Key) bool { return whole || k.Tenant == tenant && k.Scope != keys.Admin }
	if keys.Kept(to) != nil {
		return keysLeft(ctx, src, keep)
	}
	dst, err := keys.Open(ctx, to, &keys.Options{Create: true})
	if err != nil {
		return "", fmt.Errorf("the target's keyring: %w", err)
	}
	defer dst.Close()
	added, revoked, err := keys.Copy(ctx, dst, src, keep)
	if err != nil {
		return "", err
	}
	var said []string
	if len(added) > 0 {
		said = append(said, fmt.Sprintf("%s of memtool serve (their tokens open the copy)", plural(len(added), "API key")))
	}
	if len(revoked) > 0 {
		said = append(said, fmt.Sprintf("the revocation of %s since the last copy", plural(len(revoked), "API key")))
	}
	if len(said) == 0 {
		return "", nil
	}
	return "; also copied " + strings.Join(said, ", and "), nil
}

// keysLeft names the usable keys of src that keep accepts, for a target
// that keeps no keys: a server on it would refuse their tokens.
func keysLeft(ctx context.Context, src *keys.Keyring, keep func(keys.Key) bool) (string, error) {
	list, err := src.List(ctx)
	if err != nil {
		return "", fmt.Errorf("the source's API keys: %w", err)
	}
	now := time.Now()
	var left []string
	for _, k := range list {
		if keep(k) && k.Usable(now) == nil {
			left = append(left, k.ID+" ("+k.Tenant+", "+k.Scope.String()+")")
		}
	}
	if len(left) == 0 {
		return "", nil
	}
	n := len(left)
	if n > 10 {
		left = append(left[:10], "...")
	}
	return fmt.Sprintf("; the source's %s of memtool serve %s not copied, since the target keeps no keys: %s",
		plural(n, "API key"), pick(n, "was", "were"), strings.Join(left, ", ")), nil
}
