package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtool/memtool/keys"
)

// migrateKeys copies the API keys of memtool serve that the source keeps
// beside its memory (DIR.keys, a database's memtool_keys) to the
// target's keyring, so that every token opens the copy as it opens the
// source: a whole store's keys (with --all-tenants or without --tenant),
// else the tenant's own read and write keys (an admin key reaches every
// tenant of the target, so it is not copied with one tenant). Onto a
// target that holds tenants the source has not (--force), no admin key
// nor key of such a tenant is copied: it would open their memories.
// Revoked and expired keys are copied as they are; a key the target
// holds from an earlier run is revoked there if the source has revoked
// it since.
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
		left, err := usableKeys(ctx, src, keep)
		if err != nil {
			return "", fmt.Errorf("the source's API keys: %w", err)
		}
		return notCopied(left, "the target keeps no keys"), nil
	}
	// With --force the target may hold tenants the source has not, left
	// there: someone else's memories, which no key of the source opened.
	// An admin key reaches them, as does a key of such a tenant that the
	// source holds no memory of: neither is copied.
	others, err := otherTenants(ctx, from, to, allTenants)
	if err != nil {
		return "", err
	}
	foreign := func(k keys.Key) bool {
		return len(others) > 0 && (k.Scope == keys.Admin || slices.Contains(others, k.Tenant))
	}
	withheld, _ := usableKeys(ctx, src, func(k keys.Key) bool { return keep(k) && foreign(k) }) // its errors are Copy's below
	dst, err := keys.Open(ctx, to, &keys.Options{Create: true})
	if err != nil {
		return "", fmt.Errorf("the target's keyring: %w", err)
	}
	defer dst.Close()
	added, revoked, err := keys.Copy(ctx, dst, src, func(k keys.Key) bool { return keep(k) && !foreign(k) })
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
	also := notCopied(withheld, fmt.Sprintf("%s would open the target's tenants that the source has not (%s)", pick(len(withheld), "it", "they"), strings.Join(others, ", ")))
	if len(said) == 0 {
		return also, nil
	}
	return "; also copied " + strings.Join(said, ", and ") + also, nil
}

// otherTenants returns, for migrate --all-tenants, the tenants of the
// target that the source has not; none otherwise.
func otherTenants(ctx context.Context, from, to string, allTenants bool) ([]string, error) {
	if !allTenants {
		return nil, nil
	}
	have, err := listTenants(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("the source's tenants: %w", err)
	}
	there, err := listTenants(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("the target's tenants: %w", err)
	}
	var others []string
	for _, id := range there {
		if !slices.Contains(have, id) {
			others = append(others, id)
		}
	}
	return others, nil
}

// usableKeys names the keys of src that keep accepts and that can be
// used now, each as "ID (tenant, scope)".
func usableKeys(ctx context.Context, src *keys.Keyring, keep func(keys.Key) bool) ([]string, error) {
	list, err := src.List(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var names []string
	for _, k := range list {
		if keep(k) && k.Usable(now) == nil {
			names = append(names, k.ID+" ("+k.Tenant+", "+k.Scope.String()+")")
		}
	}
	return names, nil
}

// notCopied is what migrate's summary says of the keys named, not
// copied since why: "" if there are none; the first ten of them.
func notCopied(names []string, why string) string {
	n := len(names)
	if n == 0 {
		return ""
	}
	if n > 10 {
		names = append(names[:10], "...")
	}
	return fmt.Sprintf("; the source's %s of memtool serve %s not copied, since %s: %s",
		plural(n, "API key"), pick(n, "was", "were"), why, strings.Join(names, ", "))
}
