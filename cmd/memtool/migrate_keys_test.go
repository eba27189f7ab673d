package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/keys"
)

// TestMigrateCopiesKeys: the API keys of memtool serve live beside a
// directory store (DIR.keys) or in a database's own table, not in the
// memory. migrate copies them with it, so that a server on the copy
// opens every token it opened before: a whole store's keys, or one
// tenant's own (no admin key, which would reach every tenant of the
// target); revoked keys stay revoked, and a key revoked since an earlier
// run is revoked in the target by the next. A target that keeps no keys
// gets a summary naming those left behind; a store without keys, none.
func TestMigrateCopiesKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memories")
	for _, tenant := range []string{"alice", "bob"} {
		if _, stderr, code := runBinary(t, "", "create", "--store", dir, "--tenant", tenant, "--text", "hi", "/memories/h.md"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
	}
	tokens := map[string]string{}
	for _, a := range [][]string{{"alice", "write"}, {"bob", "read"}, {"alice", "read"}, {"ops", "admin"}} {
		out, stderr, code := runBinary(t, "", "keys", "add", "--store", dir, "--tenant", a[0], "--scope", a[1])
		if code != 0 {
			t.Fatalf("keys add: %d %s", code, stderr)
		}
		lines := strings.Fields(out)
		tokens[a[0]+a[1]] = lines[len(lines)-1]
	}
	id := func(name string) string { return strings.Split(tokens[name], "_")[1] }
	if _, stderr, code := runBinary(t, "", "keys", "revoke", "--store", dir, id("aliceread")); code != 0 {
		t.Fatalf("keys revoke: %d %s", code, stderr)
	}
	// opens reports which of the tokens open the keyring of the store url.
	opens := func(url string) map[string]bool {
		ring, err := keys.Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ring.Close()
		got := map[string]bool{}
		for name, token := range tokens {
			_, err := ring.Verify(ctx, token)
			if err != nil && !errors.Is(err, keys.ErrInvalidToken) {
				t.Fatalf("Verify %s on %s: %v", name, url, err)
			}
			got[name] = err == nil
		}
		return got
	}
	migrate := func(to string, args ...string) string {
		t.Helper()
		out, stderr, code := runBinary(t, "", append([]string{"migrate", "--from", dir, "--to", to}, args...)...)
		if code != 0 {
			t.Fatalf("migrate to %s %v: %d %s", to, args, code, stderr)
		}
		return out
	}
	want := func(url string, open ...string) {
		t.Helper()
		got := opens(url)
		for name, ok := range got {
			if ok != strings.Contains(" "+strings.Join(open, " ")+" ", " "+name+" ") {
				t.Errorf("on %s, token %s opens: %v; want the tokens %v to open, no other", url, name, ok, open)
			}
		}
	}

	all := "sqlite://" + filepath.Join(t.TempDir(), "all.db")
	if out := migrate(all, "--all-tenants"); !strings.Contains(out, "also copied 4 API keys of memtool serve") {
		t.Errorf("migrate --all-tenants: the summary does not say the keys were copied:\n%s", out)
	}
	want(all, "alicewrite", "bobread", "opsadmin")

	bob := filepath.Join(t.TempDir(), "bob")
	if out := migrate(bob, "--tenant", "bob"); !strings.Contains(out, "also copied 1 API key of memtool serve") {
		t.Errorf("migrate --tenant bob: the summary does not say bob's key was copied:\n%s", out)
	}
	want(bob, "bobread")

	// Revoked in the source since: the next run revokes it in the copy.
	if _, stderr, code := runBinary(t, "", "keys", "revoke", "--store", dir, id("alicewrite")); code != 0 {
		t.Fatalf("keys revoke: %d %s", code, stderr)
	}
	if out := migrate(all, "--all-tenants", "--force"); !strings.Contains(out, "the revocation of 1 API key since the last copy") {
		t.Errorf("migrate --force after a revoke: the summary does not say so:\n%s", out)
	}
	want(all, "bobread", "opsadmin")

	// A target that keeps no keys (S3): the usable keys are named.
	out := migrate(s3URL(t, ""), "--all-tenants")
	if !strings.Contains(out, "API keys of memtool serve were not copied") || !strings.Contains(out, id("bobread")) || strings.Contains(out, id("aliceread")) {
		t.Errorf("migrate to object storage: the summary does not name the usable keys left behind:\n%s", out)
	}

	// A store without keys: nothing said about them.
	plain := filepath.Join(t.TempDir(), "plain")
	runBinary(t, "", "create", "--store", plain, "--text", "hi", "/memories/h.md")
	out, stderr, code := runBinary(t, "", "migrate", "--from", plain, "--to", "sqlite://"+filepath.Join(t.TempDir(), "p.db"))
	if code != 0 || strings.Contains(out, "keys") {
		t.Errorf("migrate of a store without keys: %d %q %q", code, out, stderr)
	}
}
