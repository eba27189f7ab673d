package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateNamesKeysLeftBehind: the API keys of memtool serve live
// beside a directory store (DIR.keys) or in a database's own table, not
// in the memory, so migrate does not copy them. A store served with keys
// and migrated to SQLite would be served with none, every client's token
// refused, and nothing said so: the summary now names the keys of the
// tenants copied that the target lacks, and says how to make new ones.
func TestMigrateNamesKeysLeftBehind(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	for _, tenant := range []string{"alice", "bob"} {
		if _, stderr, code := runBinary(t, "", "create", "--store", dir, "--tenant", tenant, "--text", "hi", "/memories/h.md"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
	}
	ids := map[string]string{}
	for _, a := range [][]string{{"alice", "write"}, {"bob", "read"}, {"alice", "read"}} {
		out, stderr, code := runBinary(t, "", "keys", "add", "--store", dir, "--tenant", a[0], "--scope", a[1])
		if code != 0 {
			t.Fatalf("keys add: %d %s", code, stderr)
		}
		ids[a[0]+a[1]] = strings.Fields(out)[2] // "Added key ID for tenant …"
	}
	if _, stderr, code := runBinary(t, "", "keys", "revoke", "--store", dir, ids["aliceread"]); code != 0 {
		t.Fatalf("keys revoke: %d %s", code, stderr)
	}

	for _, c := range []struct {
		name string
		args []string
		want []string // the usable keys the summary names
	}{
		{"all", []string{"--all-tenants"}, []string{ids["alicewrite"], ids["bobread"]}},
		{"bob", []string{"--tenant", "bob"}, []string{ids["bobread"]}},
	} {
		to := "sqlite://" + filepath.Join(t.TempDir(), c.name+".db")
		out, stderr, code := runBinary(t, "", append([]string{"migrate", "--from", dir, "--to", to}, c.args...)...)
		if code != 0 {
			t.Fatalf("migrate %s: %d %s", c.name, code, stderr)
		}
		if !strings.Contains(out, "memtool keys add") {
			t.Errorf("migrate %s: the summary does not say the API keys stayed behind:\n%s", c.name, out)
		}
		for _, id := range c.want {
			if !strings.Contains(out, id) {
				t.Errorf("migrate %s: the summary does not name key %s:\n%s", c.name, id, out)
			}
		}
		if c.name == "bob" && strings.Contains(out, ids["alicewrite"]) || strings.Contains(out, ids["aliceread"]) {
			t.Errorf("migrate %s names a key of another tenant, or a revoked one:\n%s", c.name, out)
		}
	}

	// A store without keys: nothing said about them.
	plain := filepath.Join(t.TempDir(), "plain")
	runBinary(t, "", "create", "--store", plain, "--text", "hi", "/memories/h.md")
	out, stderr, code := runBinary(t, "", "migrate", "--from", plain, "--to", "sqlite://"+filepath.Join(t.TempDir(), "p.db"))
	if code != 0 || strings.Contains(out, "keys") {
		t.Errorf("migrate of a store without keys: %d %q %q", code, out, stderr)
	}
}
