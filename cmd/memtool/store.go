package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/sqlitestore"
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

// openStore opens a store from its URL, as the memory of tenant (or the
// tenant-less store if tenant is ""). The registry of schemes is written
// out here, explicitly. The returned closer releases the store.
func openStore(ctx context.Context, raw, tenant string) (memtool.Store, io.Closer, error) {
	scheme, rest, hasScheme := strings.Cut(raw, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/.") {
		// A plain path (a one-letter "scheme" would be a Windows drive).
		return openFileStore(raw, tenant)
	}
	switch scheme {
	case "mem":
		if rest != "" {
			return nil, nil, fmt.Errorf("store URL %q: mem: takes nothing after the colon", raw)
		}
		if tenant != "" {
			return nil, nil, fmt.Errorf("store URL %q: mem: has no tenants", raw)
		}
		return memstore.New(), nopCloser{}, nil
	case "sqlite":
		u, err := url.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("store URL %q: %v", raw, err)
		}
		if u.Host != "" || !filepath.IsAbs(u.Path) || u.RawQuery != "" {
			return nil, nil, fmt.Errorf("store URL %q: an SQLite URL needs an absolute path, as in sqlite:///abs/path.db", raw)
		}
		s, err := sqlitestore.Open(u.Path)
		if err != nil {
			return nil, nil, err
		}
		return scopeTenant(ctx, s, s, tenant)
	case "postgres", "postgresql":
		s, err := pgstore.Open(ctx, raw, nil)
		if err != nil {
			return nil, nil, err
		}
		return scopeTenant(ctx, s, s, tenant)
	case "s3", "gs", "azblob", "mem+blob", "file+blob":
		s, err := objectstore.Open(ctx, raw)
		if err != nil {
			return nil, nil, err
		}
		return scopeTenant(ctx, s, s, tenant)
	case "file":
		u, err := url.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("store URL %q: %v", raw, err)
		}
		if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
			return nil, nil, fmt.Errorf("store URL %q: a file URL needs an absolute path, as in file:///abs/dir", raw)
		}
		return openFileStore(u.Path, tenant)
	}
	return nil, nil, fmt.Errorf("store URL %q: unknown scheme %q (known: file, mem, sqlite, postgres, s3, gs, azblob, mem+blob, file+blob, or a plain directory path)", raw, scheme)
}

func openFileStore(dir, tenant string) (memtool.Store, io.Closer, error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("store: empty directory path")
	}
	if err := checkFileTenancy(dir, tenant); err != nil {
		return nil, nil, err
	}
	if tenant != "" {
		return openFileTenant(dir, tenant)
	}
	s, err := filestore.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
