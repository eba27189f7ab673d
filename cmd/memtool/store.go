package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/storeurl"
)

var osGetenv = os.Getenv

// defaultStore is used when neither --store nor $MEMTOOL_STORE is given.
const defaultStore = "./memories"

// storeURL picks the store: the flag, else $MEMTOOL_STORE, else ./memories.
func storeURL(flagValue string, env *cliEnv) string {
	if flagValue != "" {
		return flagValue
	}
	if v := env.getenv("MEMTOOL_STORE"); v != "" {
		return v
	}
	return defaultStore
}

// openStore opens a store from its URL through the registry (package
// storeurl), as the memory of tenant (or the tenant-less store if tenant
// is ""). Every command opens its stores here. With create false (the
// commands that only read: view, history, info, migrate's source...) a
// local store that is not there is an error rather than a new, empty one.
// The returned closer releases the store. Its errors never show a password
// or token of the URL.
func openStore(ctx context.Context, raw, tenant string, create bool) (memtool.Store, io.Closer, error) {
	s, closer, err := storeurl.Open(ctx, raw, &storeurl.Options{Tenant: tenant, Create: create})
	if errors.As(err, new(storeurl.MissingTenantError)) {
		return nil, nil, fmt.Errorf("%w (this command does not create a tenant; check --tenant, or memtool tenants)", err)
	}
	if errors.Is(err, os.ErrNotExist) && !create {
		return nil, nil, fmt.Errorf("%w (this command does not create a store; check --store or $MEMTOOL_STORE)", err)
	}
	return s, closer, err
}

// listTenants returns the tenants of the multi-tenant store at raw, which
// it does not create; none (and no error) for a store that has none yet.
func listTenants(ctx context.Context, raw string) ([]string, error) {
	ids, err := storeurl.Tenants(ctx, raw)
	if errors.Is(err, fs.ErrPermission) { // a memtool server, to a key that is not an admin key
		return nil, err
	}
	if errors.Is(err, memtool.ErrTenancy) {
		return nil, fmt.Errorf("store %s has no tenants: it holds one memory, without tenants", storeurl.Redact(raw))
	}
	return ids, err
}

// redactingWriter masks secrets (see redact) in what is written through
// it, one Write at a time: for messages, such as the log lines of a
// slog handler, each written whole.
type redactingWriter struct {
	w    io.Writer
	urls []string
}

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, storeurl.Redact(string(p), r.urls...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
