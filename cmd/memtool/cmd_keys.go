package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/memtool/memtool/keys"
)

const keysAbout = `add makes a key for --tenant and prints its token as the last line of
stdout, the only time it is shown; the store keeps only a hash of it. list
shows every key (never a token); revoke ID stops a key on every server
within seconds. Keys live in the store's database (PostgreSQL, SQLite) or
in the file DIR.keys beside a directory store.`

func setupKeys(fs *flag.FlagSet) runFunc {
	scope := fs.String("scope", "write", "what the key may do: read, write or admin (admin: any tenant, named in X-Memtool-Tenant)")
	name := fs.String("name", "", "a name for the key, to tell keys apart")
	expires := fs.String("expires", "", "how long the key works, such as 90d or 12h (default: until revoked)")
	// The shared --tenant flag names the key's tenant here, not a memory to use.
	fs.Lookup("tenant").Usage = "the tenant whose memory the new key reaches (add)"
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		action, rest := inv.args[0], inv.args[1:]
		url := storeURL(inv.sf.store, env)
		switch {
		case action == "add" && len(rest) == 0:
			return runKeysAdd(ctx, inv, url, *scope, *name, *expires)
		case action == "list" && len(rest) == 0:
			return runKeysList(ctx, inv, url)
		case action == "revoke" && len(rest) == 1:
			return runKeysRevoke(ctx, inv, url, rest[0])
		}
		return inv.usageError("want add, list or revoke ID")
	}
}

func runKeysAdd(ctx context.Context, inv *invocation, url, scopeName, name, expires string) int {
	if inv.sf.tenant == "" {
		return inv.usageError("add needs --tenant ID")
	}
	scope, err := keys.ParseScope(scopeName)
	if err != nil {
		return inv.usageError("--scope: %v", err)
	}
	var until time.Time
	if expires != "" {
		d, err := parseDays(expires)
		if err != nil || d <= 0 {
			return inv.usageError("--expires %q: want a duration such as 90d or 12h", expires)
		}
		until = time.Now().Add(d)
	}
	nk := keys.NewKey{Name: name, Tenant: inv.sf.tenant, Scope: scope, Expires: until}
	if err := nk.Check(); err != nil {
		// Checked before the store opens: a bad tenant or name creates
		// no store and no keys table.
		return inv.usageError("%v", err)
	}
	ring, err := keys.Open(ctx, url, &keys.Options{Create: true})
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer ring.Close()
	key, token, err := ring.Add(ctx, nk)
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	w := inv.env.stdout
	fmt.Fprintf(w, "Added key %s for tenant %s (scope %s%s).\n", key.ID, key.Tenant, key.Scope, expiryNote(key.Expires))
	fmt.Fprintln(w, "Its token follows; it is shown only now. Send it as Authorization: Bearer TOKEN.")
	if _, err := fmt.Fprintln(w, token); err != nil {
		return exitBrokenIO
	}
	return exitOK
}

func expiryNote(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ", expires " + t.Format(time.RFC3339)
}

func runKeysList(ctx context.Context, inv *invocation, url string) int {
	ring, err := keys.Open(ctx, url, nil)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer ring.Close()
	// Records that are no valid key (a hand edit) are never used; the
	// keys that are still work, so they are listed, and the bad ones
	// named after them, with a failing exit status.
	list, err := ring.List(ctx)
	malformed := errors.Is(err, keys.ErrMalformed)
	if err != nil && !malformed {
		return inv.fail(exitStore, "%v", err)
	}
	if len(list) == 0 && !malformed {
		return inv.fail(exitOK, "no keys")
	}
	tw := tabwriter.NewWriter(inv.env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tSCOPE\tSTATUS\tCREATED\tEXPIRES\tNAME")
	now := time.Now()
	for _, k := range list {
		status := "active"
		switch {
		case !k.Revoked.IsZero():
			status = "revoked"
		case k.Usable(now) != nil:
			status = "expired"
		}
		exp := "never"
		if !k.Expires.IsZero() {
			exp = k.Expires.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Tenant, k.Scope, status, k.Created.Format(time.RFC3339), exp, k.Name)
	}
	if err := tw.Flush(); err != nil {
		return exitBrokenIO
	}
	if malformed {
		return inv.fail(exitStore, "%v (those records are not used as keys; mend or remove them)", err)
	}
	return exitOK
}

func runKeysRevoke(ctx context.Context, inv *invocation, url, id string) int {
	if !keys.ValidID(id) {
		return inv.usageError("%q is not a key id (memtool keys list shows them)", id)
	}
	ring, err := keys.Open(ctx, url, nil)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer ring.Close()
	err = ring.Revoke(ctx, id)
	switch {
	case errors.Is(err, keys.ErrNotFound):
		return inv.fail(exitFailed, "no key %s in this store", id)
	case err != nil:
		return inv.fail(exitStore, "%v", err)
	}
	return writeOut(inv.env, fmt.Sprintf("Revoked key %s: every server refuses it within %v.\n", id, keys.DefaultCacheFor))
}
