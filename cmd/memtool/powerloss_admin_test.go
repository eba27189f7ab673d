//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	versions "github.com/memtool/memtool/history"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/storeurl"
)

// TestPowerLossAfterRekeyAndRevert loses the power right after memtool
// rekey, and then memtool revert, have said they are done: on the disk as
// found, every file and every version reads with the new key alone (README:
// drop the old key once rekey succeeds), and the revert holds.
func TestPowerLossAfterRekeyAndRevert(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 128<<20, func(t *testing.T, p powerLoss) {
		store := filepath.Join(p.Dir, "store")
		policy := writePolicy(t, `{"encrypt":true,"history":{},"expiry":true}`)
		oldKey, _ := encrypt.NewKey("old")
		newKey, _ := encrypt.NewKey("new")
		run := func(keys string, args ...string) string {
			t.Helper()
			out, stderr, code := runMemtoolEnv(t, []string{"MEMTOOL_KEY=" + keys, "MEMTOOL_POLICY=" + policy}, append(args, "--store", store)...)
			if code != 0 {
				t.Fatalf("memtool %s: exit %d: %s", args[0], code, stderr)
			}
			return out
		}
		want := map[string]string{}
		for i := range 40 {
			name := fmt.Sprintf("d%d/f%d.md", i%4, i)
			want[name] = fmt.Sprintf("file %d\n%s\n", i, strings.Repeat("words ", 50*i))
			run(oldKey.Text(), "create", "--text", want[name], "/memories/"+name)
			if i%3 == 0 {
				run(oldKey.Text(), "create", "--overwrite", "--text", want[name]+"more\n", "/memories/"+name)
				want[name] += "more\n"
			}
		}
		p.Crash()
		run(newKey.Text()+","+oldKey.Text(), "rekey")
		p.Crash()
		plReadAll(t, store, newKey, want)

		n, old := plVersion(t, store, newKey, "/memories/d0/f0.md")
		run(newKey.Text(), "revert", "/memories/d0/f0.md", "--to", fmt.Sprint(n))
		want["d0/f0.md"] = old
		p.Crash()
		plReadAll(t, store, newKey, want)
	})
}

// TestPowerLossAfterGCAndRestore loses the power right after memtool gc,
// and then memtool restore, have said they are done: the files gc said it
// expired are in the trash and nowhere else, the rest are where they were,
// and the file restore brought back is there.
func TestPowerLossAfterGCAndRestore(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		store := filepath.Join(p.Dir, "store")
		policy := writePolicy(t, `{"expiry":true,"history":{}}`)
		run := func(args ...string) string {
			t.Helper()
			out, stderr, code := runBinary(t, "", append(args, "--store", store, "--policy", policy)...)
			if code != 0 {
				t.Fatalf("memtool %s: exit %d: %s", args[0], code, stderr)
			}
			return out
		}
		want := map[string]string{}
		access := map[string]int64{}
		now := time.Now().Unix()
		for i := range 30 {
			name := fmt.Sprintf("d%d/f%d.md", i%3, i)
			want[name] = fmt.Sprintf("file %d\n", i)
			run("create", "--text", want[name], "/memories/"+name)
			access[name] = now - 3600
			if i%2 == 0 {
				access[name] = now - 40*24*3600
			}
		}
		index, _ := json.Marshal(map[string]any{"version": 1, "access": access})
		if err := os.WriteFile(filepath.Join(store, ".memtool-expiry.json"), index, 0o600); err != nil {
			t.Fatal(err)
		}
		syncTree(t, store)
		out := run("gc", "--unused-for", "30d")
		expired := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if p, ok := strings.CutPrefix(l, "expired /memories/"); ok {
				name, _, _ := strings.Cut(p, " ")
				expired[name] = true
			}
		}
		if len(expired) != 15 {
			t.Fatalf("gc expired %d files, want 15:\n%s", len(expired), out)
		}
		p.Crash()
		listed := run("restore", "--list")
		for name, content := range want {
			data, err := os.ReadFile(filepath.Join(store, name))
			if expired[name] {
				if err == nil {
					t.Errorf("after the power loss, %s, which gc expired, is back", name)
				}
				if !strings.Contains(listed, "/memories/"+name+" (expired ") {
					t.Errorf("after the power loss, %s, which gc expired, is not in the trash:\n%s", name, listed)
				}
			} else if string(data) != content {
				t.Errorf("after the power loss, %s holds %q, %v; want %q", name, data, err, content)
			}
		}
		run("restore", "/memories/d0/f0.md")
		p.Crash()
		if data, err := os.ReadFile(filepath.Join(store, "d0/f0.md")); string(data) != want["d0/f0.md"] {
			t.Errorf("after the power loss, the restored d0/f0.md holds %q, %v", data, err)
		}
	})
}

// TestPowerLossAfterMigrate loses the power right after memtool migrate
// has said it is done, from a directory to a SQLite file on the same file
// system: the copy holds every file.
func TestPowerLossAfterMigrate(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		from, to := filepath.Join(p.Dir, "store"), "sqlite://"+filepath.Join(p.Dir, "memory.db")
		want := map[string]string{}
		var in strings.Builder
		for i := range 60 {
			name := fmt.Sprintf("d%d/f%d.md", i%5, i)
			want[name] = fmt.Sprintf("file %d\n%s", i, strings.Repeat("line\n", i))
			in.WriteString(jsonLine(map[string]any{"command": "create", "path": "/memories/" + name, "file_text": want[name]}))
		}
		execMemtool(t, in.String(), "--store", from)
		if _, stderr, code := runBinary(t, "", "migrate", "--from", from, "--to", to); code != 0 {
			t.Fatalf("migrate: exit %d: %s", code, stderr)
		}
		p.Crash()
		s, closer, err := storeurl.Open(context.Background(), to, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer closer.Close()
		for name, content := range want {
			if data, err := s.ReadFile(context.Background(), name, 1<<20); string(data) != content {
				t.Errorf("after the power loss, the copy's %s holds %q, %v", name, data, err)
			}
		}
	})
}

// plReadAll reads every file of the encrypted store at dir, and every
// version history keeps of it, with key alone, and compares the files
// with want.
func plReadAll(t *testing.T, dir string, key encrypt.Key, want map[string]string) {
	t.Helper()
	s, done := openSealed(t, dir, key)
	defer done()
	ctx := context.Background()
	for name, content := range want {
		if data, err := s.ReadFile(ctx, name, 1<<20); string(data) != content {
			t.Errorf("%s reads %.40q, %v; want %.40q", name, data, err, content)
		}
		vs, err := versions.Versions(ctx, s, "/memories/"+name)
		if err != nil {
			t.Errorf("versions of %s: %v", name, err)
		}
		for _, v := range vs {
			if _, err := versions.Read(ctx, s, "/memories/"+name, v.N); err != nil {
				t.Errorf("version %d of %s: %v", v.N, name, err)
			}
		}
	}
}

// plVersion returns the number and the content of a version history
// keeps of path.
func plVersion(t *testing.T, dir string, key encrypt.Key, path string) (int, string) {
	t.Helper()
	s, done := openSealed(t, dir, key)
	defer done()
	vs, err := versions.Versions(context.Background(), s, path)
	if err != nil || len(vs) == 0 {
		t.Fatalf("versions of %s: %v, %v", path, vs, err)
	}
	data, err := versions.Read(context.Background(), s, path, vs[0].N)
	if err != nil {
		t.Fatal(err)
	}
	return vs[0].N, string(data)
}

// openSealed opens the directory store at dir through encryption with key
// alone.
func openSealed(t *testing.T, dir string, key encrypt.Key) (memtool.Store, func()) {
	t.Helper()
	raw, closer, err := storeurl.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := encrypt.New(raw, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, func() { closer.Close() }
}

// syncTree fsyncs every file and directory under dir, so that what a test
// wrote by hand survives a power loss.
func syncTree(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		return nil
	})
}

// TestPowerLossAfterKeys loses the power right after memtool keys add and
// keys revoke have said they are done, on a directory store and a SQLite
// file: every token added opens, and the one revoked stays revoked.
func TestPowerLossAfterKeys(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		for _, url := range []string{filepath.Join(p.Dir, "store"), "sqlite://" + filepath.Join(p.Dir, "memory.db")} {
			var tokens []string
			for i := range 3 {
				out, stderr, code := runBinary(t, "", "keys", "add", "--store", url, "--tenant", fmt.Sprintf("t%d", i))
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if code != 0 {
					t.Fatalf("keys add: exit %d: %s", code, stderr)
				}
				tokens = append(tokens, lines[len(lines)-1])
			}
			p.Crash()
			ctx := context.Background()
			ring, err := keys.Open(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			var revoked keys.Key
			for i, token := range tokens {
				k, err := ring.Verify(ctx, token)
				if err != nil {
					t.Fatalf("%s: after the power loss, token %d that keys add printed does not open: %v", url, i, err)
				}
				if i == 1 {
					revoked = k
				}
			}
			ring.Close()
			if _, stderr, code := runBinary(t, "", "keys", "revoke", "--store", url, revoked.ID); code != 0 {
				t.Fatalf("keys revoke: exit %d: %s", code, stderr)
			}
			p.Crash()
			if ring, err = keys.Open(ctx, url, nil); err != nil {
				t.Fatal(err)
			}
			for i, token := range tokens {
				if _, err := ring.Verify(ctx, token); (err == nil) != (i != 1) {
					t.Errorf("%s: after the power loss, token %d opens: %v (the second was revoked)", url, i, err)
				}
			}
			ring.Close()
		}
	})
}

// TestPowerLossAfterTenants loses the power right after the first writes
// of two tenants were answered, on a directory store and a SQLite file:
// each tenant's files are there, the store is still multi-tenant (memtool
// refuses it without --tenant, so the tenant-less view cannot see into a
// tenant), and memtool tenants lists both.
func TestPowerLossAfterTenants(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		for _, url := range []string{filepath.Join(p.Dir, "store"), "sqlite://" + filepath.Join(p.Dir, "memory.db")} {
			for _, tenant := range []string{"alice", "bob"} {
				execMemtool(t, jsonLine(map[string]any{"command": "create", "path": "/memories/" + tenant + ".md", "file_text": "of " + tenant}), "--store", url, "--tenant", tenant)
			}
			p.Crash()
			for _, tenant := range []string{"alice", "bob"} {
				out := execMemtool(t, jsonLine(map[string]any{"command": "view", "path": "/memories/" + tenant + ".md"}), "--store", url, "--tenant", tenant)
				if !strings.Contains(out, "of "+tenant) {
					t.Errorf("%s: after the power loss, %s's file reads %s", url, tenant, out)
				}
			}
			if out, _, code := runBinary(t, jsonLine(map[string]any{"command": "view", "path": "/memories"}), "exec", "--store", url); code == 0 && !strings.Contains(out, `"is_error":true`) {
				t.Errorf("%s: after the power loss, the store opens without a tenant: %s", url, out)
			}
			if out, stderr, code := runBinary(t, "", "tenants", "--store", url); code != 0 || out != "alice\nbob\n" {
				t.Errorf("%s: after the power loss, memtool tenants: exit %d, %q, %q", url, code, out, stderr)
			}
		}
	})
}
