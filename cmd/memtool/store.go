package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/memstore"
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

// openStore opens a store from its URL. The registry of schemes is written
// out here, explicitly. The returned closer releases the store.
func openStore(raw string) (memtool.Store, io.Closer, error) {
	scheme, rest, hasScheme := strings.Cut(raw, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/.") {
		// A plain path (a one-letter "scheme" would be a Windows drive).
		return openFileStore(raw)
	}
	switch scheme {
	case "mem":
		if rest != "" {
			return nil, nil, fmt.Errorf("store URL %q: mem: takes nothing after the colon", raw)
		}
		return memstore.New(), nopCloser{}, nil
	case "file":
		u, err := url.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("store URL %q: %v", raw, err)
		}
		if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(u.Path) {
			return nil, nil, fmt.Errorf("store URL %q: a file URL needs an absolute path, as in file:///abs/dir", raw)
		}
		return openFileStore(u.Path)
	}
	return nil, nil, fmt.Errorf("store URL %q: unknown scheme %q (known: file, mem, or a plain directory path)", raw, scheme)
}

func openFileStore(dir string) (memtool.Store, io.Closer, error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("store: empty directory path")
	}
	s, err := filestore.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
