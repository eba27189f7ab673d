package main

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storeurl"
)

// runInfo describes a store: its kind, its tenancy, the policies in force,
// encryption, and how many files and bytes the memory holds. It never
// creates the store.
func runInfo(ctx context.Context, env *cliEnv, inv *invocation) int {
	url := storeURL(inv.sf.store, env)
	// The policy file is read first: a bad one is an error whatever the
	// store turns out to be.
	policyName := cmp.Or(inv.sf.policy, env.getenv("MEMTOOL_POLICY"))
	p := &policyFile{}
	if policyName != "" {
		var err error
		if p, err = loadPolicy(policyName); err != nil {
			return inv.fail(exitUsage, "%v", err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "store:      %s (%s)\n", storeurl.Redact(url), storeurl.Kind(url))
	noTenants := false // the store lists no tenants: single-tenant, or unused
	if inv.sf.tenant == "" {
		ids, err := listTenants(ctx, url)
		if err == nil && len(ids) > 0 {
			fmt.Fprintf(&b, "tenancy:    multi-tenant, %s (memtool tenants lists them; --tenant ID describes one)\n", plural(len(ids), "tenant"))
			return writeOut(env, b.String())
		}
		noTenants = err == nil
	}
	inv.sf.noRecord = true // describing a store records no policy in it
	_, st, closer, err := openStack(ctx, env, &inv.sf, false)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer closer.Close()
	tenancyAt := b.Len() // the tenancy line goes here, once the memory is counted
	policies := "none"
	if names := p.names(); len(names) > 0 {
		policies = strings.Join(names, ", ") + " (from " + policyName + ")"
	}
	fmt.Fprintf(&b, "policies:   %s\n", policies)
	encryption := "off"
	if p.Encrypt {
		encryption = "on (AES-GCM; keys from $MEMTOOL_KEY or $MEMTOOL_KEY_FILE)"
	}
	fmt.Fprintf(&b, "encryption: %s\n", encryption)
	var files, dirs int
	var bytes int64
	err = memtool.Walk(ctx, st.belowExpiry, "", func(name string, fi memtool.FileInfo) error {
		switch {
		case name == "":
		case strings.HasPrefix(name, ".memtool"):
			// memtool's own (expiry's access index, history's versions,
			// the policy record), listed by a store such as SQLite: not
			// the memory's.
			if fi.IsDir() {
				return fs.SkipDir
			}
		case fi.IsDir():
			dirs++
		default:
			files++
			bytes += fi.Size
		}
		return nil
	})
	if err != nil {
		return inv.fail(exitFailed, "reading the store: %v", err)
	}
	fmt.Fprintf(&b, "memory:     %s, %s, %s\n", plural(files, "file"), plural(dirs, "directory", "directories"), plural(bytes, "byte"))
	tenancy := "one memory, no tenants"
	switch {
	case inv.sf.tenant != "":
		tenancy = "tenant " + inv.sf.tenant + " of a multi-tenant store"
	case noTenants && files == 0 && dirs == 0:
		tenancy = "not decided yet: nothing is stored (a write makes it one memory; a first tenant, multi-tenant)"
	}
	out := b.String()
	return writeOut(env, out[:tenancyAt]+"tenancy:    "+tenancy+"\n"+out[tenancyAt:])
}

// writeOut writes s on stdout.
func writeOut(env *cliEnv, s string) int {
	if _, err := fmt.Fprint(env.stdout, s); err != nil {
		return exitBrokenIO
	}
	return exitOK
}

// names lists the policies in force, as a reader would name them.
func (p *policyFile) names() []string {
	var out []string
	if p.Limits != nil {
		out = append(out, "limits")
	}
	if p.Secrets != "" {
		out = append(out, "secrets ("+p.Secrets+")")
	}
	if p.Audit != "" {
		to := p.Audit
		if to == "-" {
			to = "stderr"
		}
		out = append(out, "audit (to "+to+")")
	}
	if p.Encrypt {
		out = append(out, "encrypt")
	}
	if p.Expiry {
		out = append(out, "expiry")
	}
	if p.History != nil {
		out = append(out, "history")
	}
	return out
}
