package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/memtool/memtool"
)

// scopeTenant turns an opened store into the memory memtool runs on: the
// store of tenant, or the store itself if tenant is "". Either way the
// tenancy mode is checked (and recorded on first use) now, so that a
// mismatch fails the open, not the first command.
func scopeTenant(ctx context.Context, s memtool.Store, closer io.Closer, tenant string) (memtool.Store, io.Closer, error) {
	if tenant == "" {
		if _, err := s.Stat(ctx, ""); err != nil {
			closer.Close()
			return nil, nil, err
		}
		return s, closer, nil
	}
	t, err := memtool.ForwardTenant(ctx, s, tenant)
	if errors.Is(err, errors.ErrUnsupported) {
		err = fmt.Errorf("store: this store has no tenants")
	}
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return t, closer, nil
}

// A multi-tenant file store keeps tenant ID's memory in the directory
// .memtool-tenants/ID of the store directory (filestore's layout; migrate
// reads it to carry policy data along).
const tenantsDir = ".memtool-tenants"

// storeOwnName reports whether a name in a store directory belongs to the
// file store's machinery (its lock, temp files and trash, the tenants
// directory) rather than to a memory.
func storeOwnName(name string) bool {
	return name == ".memtool.lock" || name == tenantsDir ||
		strings.HasPrefix(name, ".memtool-tmp-") || strings.HasPrefix(name, ".memtool-trash-")
}
