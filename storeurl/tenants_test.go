package storeurl_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
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
