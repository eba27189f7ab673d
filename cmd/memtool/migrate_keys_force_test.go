package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
)

// TestMigrateForceKeepsOtherTenantsKeys: migrate --all-tenants --force
// into a store that holds tenants the source has not (left there, and
// named in the summary) copies no key that would open them: not the
// source's admin keys, which reach every tenant of the target, nor the
// source's keys of a tenant the source holds no memory of but the target
// does (someone else's there). Before, both were copied, and a token of
// the source opened the target's other tenants' memories.
func TestMigrateForceKeepsOtherTenantsKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src")
	dst := filepath.Join(t.TempDir(), "dst")
	for _, c := range [][]string{{src, "alice"}, {dst, "carol"}, {dst, "dave"}} {
		if _, stderr, code := runBinary(t, "", "create", "--store", c[0], "--tenant", c[1], "--text", "hi", "/memories/h.md"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
	}
	tokens := map[string]string{}
	for _, a := range [][]string{{"alice", "write"}, {"carol", "read"}, {"ops", "admin"}} {
		out, stderr, code := runBinary(t, "", "keys", "add", "--store", src, "--tenant", a[0], "--scope", a[1])
		if code != 0 {
			t.Fatalf("keys add: %d %s", code, stderr)
		}
		f := strings.Fields(out)
		tokens[a[0]] = f[len(f)-1]
	}
	out, stderr, code := runBinary(t, "", "migrate", "--from", src, "--to", dst, "--all-tenants", "--force")
	if code != 0 {
		t.Fatalf("migrate: %d %s", code, stderr)
	}
	ring, err := keys.Open(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	for name, want := range map[string]bool{"alice": true, "carol": false, "ops": false} {
		_, err := ring.Verify(ctx, tokens[name])
		if err != nil && !errors.Is(err, keys.ErrInvalidToken) {
			t.Fatal(err)
		}
		if (err == nil) != want {
			t.Errorf("the source's key of %s opens the target: %v, want %v; summary:\n%s", name, err == nil, want, out)
		}
	}
	if !strings.Contains(out, "not copied") {
		t.Errorf("the summary does not say which keys were not copied:\n%s", out)
	}
}
