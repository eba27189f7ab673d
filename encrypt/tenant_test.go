package encrypt_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
)

// TestTenantBound: Tenant returns the inner tenant's store under the same
// keys, its files bound to that tenant (doc.go, Capabilities): a file
// written through it opens where the wrapper is made over that tenant's
// store with Options.Tenant set to it (as memtool serve and --tenant do),
// and its stored bytes copied into another tenant's store do not open
// there, through either way of getting that tenant's store.
func TestTenantBound(t *testing.T) {
	ctx := context.Background()
	k1 := newKey(t, "k1")
	inner := openDir(t, filepath.Join(t.TempDir(), "m"))
	s := wrap(t, inner, &encrypt.Options{Tenant: "root"}, k1)
	tenantOf := func(s memtool.Store, id string) memtool.Store {
		t.Helper()
		ts, err := s.(memtool.Tenanted).Tenant(ctx, id)
		if err != nil {
			t.Fatalf("Tenant(%q): %v", id, err)
		}
		return ts
	}
	alice := tenantOf(s, "alice")
	if err := alice.WriteFile(ctx, "a.md", []byte("alice's notes"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	innerAlice, innerBob := tenantOf(inner, "alice"), tenantOf(inner, "bob")
	if got := text(t, wrap(t, innerAlice, &encrypt.Options{Tenant: "alice"}, k1), "a.md"); got != "alice's notes" {
		t.Errorf("alice's file through New over her store: %q", got)
	}
	stored, err := innerAlice.ReadFile(ctx, "a.md", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := innerBob.WriteFile(ctx, "a.md", stored, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for how, bob := range map[string]memtool.Store{
		"Tenant":   tenantOf(s, "bob"),
		"New":      wrap(t, innerBob, &encrypt.Options{Tenant: "bob"}, k1),
		"the root": wrap(t, innerBob, &encrypt.Options{Tenant: "root"}, k1),
	} {
		if got, err := bob.ReadFile(ctx, "a.md", 1<<20); got != nil || !errors.Is(err, encrypt.ErrAuth) {
			t.Errorf("alice's file copied to bob, through %s: %q, %v; want ErrAuth", how, got, err)
		}
	}
}
