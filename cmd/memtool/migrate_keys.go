package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtool/memtool/keys"
)

// keysLeft says, for migrate's summary, which API keys of memtool serve
// the source keeps that still work and reach a tenant copied (any key
// with allTenants or without a tenant, else the tenant's own and admin
// keys) and that the target does not hold: keys live beside the memory
// (DIR.keys, a database's own table), not in it, and migrate does not
// copy them, so a server on the target would refuse their tokens. It
// returns "" when there are none, and says so too if the source's keys
// cannot be listed. It opens the keyrings without Create, which writes
// nothing.
func keysLeft(ctx context.Context, from, to, tenant string, allTenants bool) string {
	if keys.Kept(from) != nil {
		return ""
	}
	list := func(url string) ([]keys.Key, error) {
		ring, err := keys.Open(ctx, url, nil)
		if err != nil {
			return nil, err
		}
		defer ring.Close()
		return ring.List(ctx)
	}
	src, err := list(from)
	if err != nil && len(src) == 0 {
		return fmt.Sprintf("; the source's API keys of memtool serve could not be listed (%v), and migrate copies none", err)
	}
	var there []string
	if keys.Kept(to) == nil {
		dst, _ := list(to)
		for _, k := range dst {
			there = append(there, k.ID)
		}
	}
	now := time.Now()
	var left []string
	for _, k := range src {
		reaches := allTenants || tenant == "" || k.Tenant == tenant || k.Scope == keys.Admin
		if reaches && k.Usable(now) == nil && !slices.Contains(there, k.ID) {
			left = append(left, k.ID+" ("+k.Tenant+", "+k.Scope.String()+")")
		}
	}
	if len(left) == 0 {
		return ""
	}
	n := len(left)
	if n > 10 {
		left = append(left[:10], "...")
	}
	return fmt.Sprintf("; the source's %s of memtool serve %s not copied (keys are kept beside a memory, not in it): %s; a server on the target needs keys made for it with memtool keys add --store %s",
		plural(n, "API key"), pick(n, "was", "were"), strings.Join(left, ", "), to)
}
