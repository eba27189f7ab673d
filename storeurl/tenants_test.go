package storeurl_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/storeurl"
)

// OpenTenants gives each tenant its own memory: in one directory, as
// Open with a tenant does, and in mem:, a memory per tenant.
func TestOpenTenants(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	for _, url := range []string{dir, "mem:"} {
		tenant, closer, err := storeurl.OpenTenants(t.Context(), url, &storeurl.Options{Create: true})
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		a, err := tenant(t.Context(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteFile(t.Context(), "notes.md", []byte("alice's"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		again, _ := tenant(t.Context(), "alice")
		if data, err := again.ReadFile(t.Context(), "notes.md", 100); err != nil || string(data) != "alice's" {
			t.Errorf("%s: alice again reads %q, %v", url, data, err)
		}
		b, _ := tenant(t.Context(), "bob")
		if _, err := b.Stat(t.Context(), "notes.md"); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("%s: bob sees alice's file: %v", url, err)
		}
		if _, err := tenant(t.Context(), "../alice"); err == nil {
			t.Errorf("%s: an invalid tenant id was taken", url)
		}
		// The closer lists the tenants through the store it holds.
		if ids, err := closer.Tenants(t.Context()); err != nil || !slices.Contains(ids, "alice") || slices.Contains(ids, "../alice") {
			t.Errorf("%s: closer.Tenants = %v, %v", url, ids, err)
		}
		closer.Close()
	}
	// What Open reads as tenant alice of the directory is that memory.
	s := open(t, dir, &storeurl.Options{Tenant: "alice"})
	if data, err := s.ReadFile(t.Context(), "notes.md", 100); err != nil || string(data) != "alice's" {
		t.Errorf("Open as alice: %q, %v", data, err)
	}
	// A missing directory is not made without Create.
	if _, _, err := storeurl.OpenTenants(t.Context(), filepath.Join(t.TempDir(), "none"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing directory: %v", err)
	}
}

// Open that is not to create anything does not claim a tenant the store
// does not have: on an unused directory store (which would become
// multi-tenant for good) and on one with tenants, on SQLite too, it fails
// with a MissingTenantError and leaves no trace, while a tenant the store
// has opens.
func TestOpenMissingTenantCreatesNothing(t *testing.T) {
	for _, kind := range []string{"dir", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			url := dir
			if kind == "sqlite" {
				url = "sqlite://" + filepath.Join(dir, "m.db")
			}
			open := func(tenant string, create bool) error {
				s, closer, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: tenant, Create: create})
				if err == nil {
					if create {
						err = s.WriteFile(t.Context(), "n.md", []byte("x"), memtool.CreateOnly)
					}
					closer.Close()
				}
				return err
			}
			if kind == "dir" {
				// An unused store: its directory, empty.
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				err := open("typo", false)
				if !errors.As(err, new(storeurl.MissingTenantError)) || !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a read-only open of a tenant of an unused store: %v; want a MissingTenantError", err)
				}
				if _, err := os.Stat(filepath.Join(dir, filestore.TenantsDir)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the read-only open claimed the unused store for tenants (%v)", err)
				}
			}
			if err := open("alice", true); err != nil {
				t.Fatal(err)
			}
			if err := open("alice", false); err != nil {
				t.Errorf("a read-only open of a tenant the store has: %v", err)
			}
			if err := open("bob", false); !errors.As(err, new(storeurl.MissingTenantError)) {
				t.Errorf("a read-only open of a tenant the store has not: %v", err)
			}
			if ids, err := storeurl.Tenants(t.Context(), url); err != nil || !slices.Equal(ids, []string{"alice"}) {
				t.Errorf("tenants after the read-only opens: %v, %v; want [alice]", ids, err)
			}
		})
	}
}
