package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/storeurl"
)

func setupRekey(fs *flag.FlagSet) runFunc {
	allTenants := fs.Bool("all-tenants", false, "re-encrypt every tenant of a multi-tenant store, one after another")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		return runRekey(ctx, env, inv, *allTenants)
	}
}

// runRekey re-encrypts every file of an encrypted store (package encrypt)
// that is not yet under the first key, after a rotation (memtool keygen
// --rotate), including the policies' own entries: of the store or the
// tenant --tenant names, or of every tenant with --all-tenants. It says
// the other keys may be dropped only when encrypt.Rekey succeeded on each,
// that is when its last pass over the store found every file under the
// first key; never after --tenant, which leaves the other tenants as they
// are. A memtool server (--store https://…) is refused before anything
// is read: it encrypts its store with its own keys, so its store is
// rekeyed where it runs. A memory that is not encrypted (of the store,
// --tenant, or any tenant with --all-tenants) is refused before anything
// is rekeyed: see refuseUnencrypted.
func runRekey(ctx context.Context, env *cliEnv, inv *invocation, allTenants bool) int {
	if url := storeURL(inv.sf.store, env); storeurl.Server(url) {
		// A server encrypts its store with its own keys, and answers the
		// text: a rekey from here would see no ciphertext, and would seal
		// again, with this process's keys, any memory whose text happens
		// to be a sealed file.
		return inv.fail(exitUsage, "%s is a memtool server: rekeying is done on the server's own store, with the server's keys (run memtool rekey where the server runs, with --store naming the store it serves). Nothing was changed.", storeurl.Redact(url))
	}
	keys, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
	if err != nil {
		return inv.fail(exitUsage, "%v", err)
	}
	tenants := []string{inv.sf.tenant}
	if allTenants {
		if inv.sf.tenant != "" {
			return inv.fail(exitUsage, "--tenant and --all-tenants exclude each other")
		}
		if tenants, err = listTenants(ctx, storeURL(inv.sf.store, env)); err != nil {
			return inv.fail(exitStore, "%v", err)
		}
		// Files that no tenant reaches would stay under the old keys.
		if err := checkTenantsDir(storeURL(inv.sf.store, env), "rekey --all-tenants would leave %s under the old keys"); err != nil {
			return inv.fail(exitFailed, "the store %v. Nothing was changed.", err)
		}
	}
	if code := refuseUnencrypted(ctx, env, inv, tenants, allTenants); code != exitOK {
		return code
	}
	newID := keys[0].ID
	var failed []string
	unopened := false // a file did not open: running again will not help
	broken := false   // stdout could not be written
	for _, tenant := range tenants {
		n, code, err := rekeyOne(ctx, env, inv, keys, tenant)
		if code != exitOK {
			return code
		}
		of := ""
		if allTenants {
			of = " of tenant " + tenant
		}
		if _, werr := fmt.Fprintf(env.stdout, "re-encrypted %s%s with key %s\n", plural(n, "file"), of, newID); werr != nil {
			broken = true
		}
		if err != nil {
			why := err.Error()
			if allTenants {
				why = "tenant " + tenant + ": " + why
			}
			failed = append(failed, why)
			unopened = unopened || errors.As(err, new(*encrypt.Error))
		}
	}
	if unopened {
		return inv.fail(exitFailed, "%s\nNot every file is under key %s yet, and a file above does not open with any of these keys: give memtool the key it names (in the key file), or move the file out of the store if it is damaged, then run memtool rekey again; keep the other keys meanwhile.", strings.Join(failed, "\n"), newID)
	}
	if len(failed) > 0 {
		return inv.fail(exitFailed, "%s\nNot every file is under key %s yet: keep the other keys, and run memtool rekey again until it succeeds (once every process that writes to the store has key %s first).", strings.Join(failed, "\n"), newID, newID)
	}
	if len(keys) > 1 {
		var old []string
		for _, k := range keys[1:] {
			old = append(old, k.ID)
		}
		if t := inv.sf.tenant; t != "" {
			// The other tenants' files were not walked: they may still
			// be under the old keys.
			inv.fail(exitOK, "a last pass over tenant %s found every file under key %s. The other keys (%s) may still open other tenants' files: remove them only once memtool rekey --all-tenants succeeds.", t, newID, strings.Join(old, ", "))
		} else {
			inv.fail(exitOK, "a last pass over the store found every file under key %s. The other keys (%s) can be removed once every process that writes to the store has key %s first: one that still has an old key first writes under it (restart it with the new keys, then run memtool rekey again).", newID, strings.Join(old, ", "), newID)
		}
	}
	if broken {
		return exitBrokenIO
	}
	return exitOK
}

// refuseUnencrypted checks, before anything is rekeyed, that the memory
// of each of tenants ("" for a store without tenants) is encrypted, and
// otherwise refuses, naming each one that is not and why, and returns
// an exit status other than exitOK. rekey does not encrypt a memory in
// place (its processes, opening it without keys, would then be refused),
// and a run that rekeyed the other tenants and then failed on such a one
// could never succeed, so the old keys could never go.
func refuseUnencrypted(ctx context.Context, env *cliEnv, inv *invocation, tenants []string, allTenants bool) int {
	var plain []string
	for _, tenant := range tenants {
		why, err := unencrypted(ctx, env, inv.sf.store, tenant)
		if err != nil {
			return inv.fail(exitStore, "%v", err)
		}
		if why != "" {
			name := "the store"
			if tenant != "" {
				name = "tenant " + tenant
			}
			plain = append(plain, name+" is not encrypted: "+why)
		}
	}
	switch {
	case len(plain) == 0:
		return exitOK
	case allTenants:
		return inv.fail(exitStore, "%s.\nmemtool rekey does not encrypt a memory in place, and rekeys no tenant while one of them is unencrypted. Nothing was changed. To encrypt a tenant, copy it into an encrypted store with memtool migrate --from STORE --tenant ID --to NEW --to-policy POLICY; to rekey the encrypted tenants alone, run memtool rekey --tenant ID for each of them.", strings.Join(plain, ";\n"))
	}
	from := "STORE"
	if tenants[0] != "" {
		from += " --tenant " + tenants[0]
	}
	return inv.fail(exitStore, "%s. memtool rekey does not encrypt a memory in place. Nothing was changed. To encrypt it, copy it into an encrypted store with memtool migrate --from %s --to NEW --to-policy POLICY.", plain[0], from)
}

// unencrypted says why the memory of tenant in the store is not
// encrypted, or "" if it is: its policy record says so, or it has no
// record and its first file is unencrypted (as memtool judges a store
// when it opens it: see checkPolicy).
func unencrypted(ctx context.Context, env *cliEnv, store, tenant string) (string, error) {
	url := storeURL(store, env)
	raw, closer, err := openStore(ctx, url, tenant, false)
	if err != nil {
		return "", err
	}
	defer closer.Close()
	rec, _, found, err := readRecord(ctx, raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("store %s: %w", storeLabel(url, tenant), err)
	case found && !rec.Encrypt:
		return "its policy record says so", nil
	case found:
		return "", nil
	}
	name, err := findFile(ctx, raw, tenant, true, true)
	if err != nil || name == "" {
		return "", err
	}
	return fmt.Sprintf("it holds unencrypted files (such as %s), and no policy record", shownName(name)), nil
}

// rekeyOne runs encrypt.Rekey on the store, or on its tenant if tenant is
// not "": the files it re-encrypted and Rekey's error, or an exit status
// other than exitOK (having said why) if the store cannot be opened.
func rekeyOne(ctx context.Context, env *cliEnv, inv *invocation, keys []encrypt.Key, tenant string) (int, int, error) {
	// Rekey works on the raw store, below any policy (which would wrap it
	// in a second encryption layer), with the policies' data listed. It
	// takes no --policy.
	sf := inv.sf
	sf.tenant = tenant
	raw, closer, err := openRawStore(ctx, env, &sf)
	if err != nil {
		return 0, inv.fail(exitStore, "%v", err), nil
	}
	defer closer.Close()
	store, err := encrypt.New(raw, keys, &encrypt.Options{Tenant: tenant})
	if err != nil {
		return 0, inv.fail(exitUsage, "%v", err), nil
	}
	n, err := encrypt.Rekey(ctx, store, policyData...)
	return n, exitOK, err
}
