package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
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
	ts, ok := s.(memtool.Tenanted)
	if !ok {
		closer.Close()
		return nil, nil, fmt.Errorf("store: this store has no tenants")
	}
	t, err := ts.Tenant(ctx, tenant)
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return t, closer, nil
}

// A multi-tenant file store keeps tenant ID's memory in the directory
// .memtool-tenants/ID of the store directory. The path gate refuses names
// starting with ".memtool", so even a tenant-less store opened on that
// directory could not reach into a tenant's files.
const tenantsDir = ".memtool-tenants"

// storeOwnName reports whether a name in a store directory belongs to the
// file store's machinery (its lock, temp files and trash, the tenants
// directory) rather than to a memory. Policy data of a tenant-less memory
// (.memtool-history, .memtool-expiry*) is the memory's: a directory holding
// it has a tenant-less memory and gets no tenants.
func storeOwnName(name string) bool {
	return name == ".memtool.lock" || name == tenantsDir ||
		strings.HasPrefix(name, ".memtool-tmp-") || strings.HasPrefix(name, ".memtool-trash-")
}

// checkFileTenancy refuses to mix tenants and no tenant in one directory:
// a directory with tenants has no tenant-less memory, and a directory that
// holds a tenant-less memory gets no tenants.
func checkFileTenancy(dir, tenant string) error {
	if tenant == "" {
		if _, err := os.Lstat(filepath.Join(dir, tenantsDir)); err == nil {
			return fmt.Errorf("store %s: %w", dir, memtool.TenancyError(true))
		}
		return nil
	}
	if err := memtool.ValidateTenant(tenant); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !storeOwnName(e.Name()) {
			return fmt.Errorf("store %s: %w", dir, memtool.TenancyError(false))
		}
	}
	return nil
}

func openFileTenant(dir, tenant string) (memtool.Store, io.Closer, error) {
	if err := os.MkdirAll(filepath.Join(dir, tenantsDir), 0o700); err != nil {
		return nil, nil, err
	}
	s, err := filestore.Open(filepath.Join(dir, tenantsDir, tenant))
	if err != nil {
		return nil, nil, err
	}
	return s, s, nil
}
