package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/filestore"
	versions "github.com/memtool/memtool/history"
)

// TestRekey: files encrypted with an old key are rewritten with the new
// one, after which the old key is no longer needed.
func TestRekey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	oldKey, _ := encrypt.NewKey("old")
	runThrough(t, dir, encryptedWith(t, oldKey),
		`{"command":"create","path":"/memories/a.md","file_text":"alpha"}`,
		`{"command":"create","path":"/memories/d/b.md","file_text":"beta"}`,
	)

	keyFile := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(keyFile, []byte(oldKey.Text()+"\n"), 0o600)
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", keyFile); code != 0 {
		t.Fatalf("keygen --rotate: %d %s", code, stderr)
	}
	out, stderr, code := runMemtoolEnv(t, []string{"MEMTOOL_KEY_FILE=" + keyFile}, "rekey", "--store", dir)
	if code != 0 || out != "re-encrypted 2 files with key new\n" {
		t.Fatalf("rekey: exit %d, %q, %q", code, out, stderr)
	}
	keys, _ := encrypt.ParseKeys(readDisk(t, keyFile))
	fs, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	onlyNew, _ := encrypt.New(fs, keys[:1], nil)
	for name, want := range map[string]string{"a.md": "alpha", "d/b.md": "beta"} {
		if got, err := onlyNew.ReadFile(context.Background(), name, 100); err != nil || string(got) != want {
			t.Errorf("%s with the new key alone: %q, %v", name, got, err)
		}
	}
	if _, stderr, code := runMemtoolEnv(t, nil, "rekey", "--store", dir); code != exitUsage || !strings.Contains(stderr, "MEMTOOL_KEY") {
		t.Errorf("rekey without keys: exit %d, %q", code, stderr)
	}
}

// runMemtoolEnv runs the binary with extra environment variables, and
// without any MEMTOOL_KEY or MEMTOOL_KEY_FILE of the test's own.
func runMemtoolEnv(t *testing.T, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var env []string
	for _, kv := range childEnv(extra...) {
		if (strings.HasPrefix(kv, "MEMTOOL_KEY=") || strings.HasPrefix(kv, "MEMTOOL_KEY_FILE=")) && !contains(extra, kv) {
			continue
		}
		env = append(env, kv)
	}
	return runMemtool(t, env, "", args...)
}

// TestRekeyPolicyEntries: rekey also re-encrypts what the policies over
// the encryption keep for themselves (history's versions, expiry's index
// and trash), which the file store leaves out of its listing: after the
// old key is dropped, every version and every trashed file still opens.
func TestRekeyPolicyEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memories")
	keyFile := filepath.Join(t.TempDir(), "keys")
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"encrypt":true,"expiry":true,"history":{"max_versions":10}}`), 0o600)
	oldKey, _ := encrypt.NewKey("old")
	os.WriteFile(keyFile, []byte(oldKey.Text()+"\n"), 0o600)
	env := []string{"MEMTOOL_KEY_FILE=" + keyFile, "MEMTOOL_POLICY=" + policy}

	// The stack the policy file builds (encryption innermost), with the
	// access clock 40 days back, so that gc expires what is written here.
	past := time.Now().Add(-40 * 24 * time.Hour)
	runThrough(t, dir, func(s memtool.Store) memtool.Store {
		return versions.New(expiry.New(encryptedWith(t, oldKey)(s), &expiry.Options{Now: func() time.Time { return past }}), nil)
	},
		`{"command":"create","path":"/memories/a.md","file_text":"tea"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"tea","new_str":"coffee"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"coffee","new_str":"water"}`,
		`{"command":"create","path":"/memories/d/gone.md","file_text":"gone"}`,
		`{"command":"delete","path":"/memories/d/gone.md"}`,
		`{"command":"create","path":"/memories/old.md","file_text":"old text"}`,
	)
	if out, stderr, code := runMemtoolEnv(t, env, "gc", "--store", dir, "--unused-for", "30d"); code != 0 || strings.Count(out, "expired ") != 2 {
		t.Fatalf("gc: exit %d, %q, %q", code, out, stderr)
	}
	if out, stderr, code := runMemtoolEnv(t, env, "create", "--store", dir, "--text", "new text", "/memories/new.md"); code != 0 {
		t.Fatalf("create: exit %d, %q, %q", code, out, stderr)
	}

	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", keyFile); code != 0 {
		t.Fatalf("keygen --rotate: %d %s", code, stderr)
	}
	out, stderr, code := runMemtoolEnv(t, env, "rekey", "--store", dir)
	sealed := sealedFiles(t, dir)
	if want := fmt.Sprintf("re-encrypted %d files with key new\n", len(sealed)); code != 0 || out != want {
		t.Errorf("rekey: exit %d, %q, %q; want %q", code, out, stderr, want)
	}
	for name, key := range sealed {
		if key != "new" {
			t.Errorf("%s is still sealed with key %q", name, key)
		}
	}

	// Drop the old key.
	keys, _ := encrypt.ParseKeys(readDisk(t, keyFile))
	os.WriteFile(keyFile, []byte(keys[0].Text()+"\n"), 0o600)
	var stderrb strings.Builder
	cli := &cliEnv{stdout: io.Discard, stderr: &stderrb, getenv: func(k string) string {
		return map[string]string{"MEMTOOL_KEY_FILE": keyFile, "MEMTOOL_POLICY": policy}[k]
	}}
	_, st, closer, err := openStack(context.Background(), cli, &storeFlags{store: dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string][]string{"/memories/a.md": {"tea", "coffee"}, "/memories/d/gone.md": {"gone"}} {
		vs, err := versions.Versions(ctx, st.belowHistory, p)
		if err != nil || len(vs) != len(want) {
			t.Fatalf("versions of %s: %v, %v", p, vs, err)
		}
		for i, v := range vs {
			if got, err := versions.Read(ctx, st.belowHistory, p, v.N); err != nil || string(got) != want[i] {
				t.Errorf("%s version %d: %q, %v; want %q", p, v.N, got, err, want[i])
			}
		}
	}
	if _, err := st.belowExpiry.ReadFile(ctx, ".memtool-expiry.json", 1<<20); err != nil {
		t.Errorf("the access index: %v", err)
	}
	closer.Close()
	for p, want := range map[string]string{"/memories/a.md": "water", "/memories/old.md": "old text", "/memories/new.md": ""} {
		if want != "" {
			if out, stderr, code := runMemtoolEnv(t, env, "restore", "--store", dir, p); code != 0 {
				t.Errorf("restore %s: exit %d, %q, %q", p, code, out, stderr)
			}
		} else {
			want = "new text"
		}
		if out, stderr, _ := runMemtoolEnv(t, env, "view", "--store", dir, p); !strings.Contains(out, want) {
			t.Errorf("view %s: %q, %q", p, out, stderr)
		}
	}
	if stderrb.Len() > 0 {
		t.Errorf("stderr: %s", stderrb.String())
	}
}

// sealedFiles returns the files under dir in the encrypted format, with
// the key each names.
func sealedFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(b) >= encrypt.Overhead && (string(b[:4]) == "mte1" || string(b[:4]) == "mte2") {
			out[p] = string(bytes.TrimRight(b[4:4+encrypt.MaxKeyIDLen], "\x00"))
		} else if base := filepath.Base(p); base != ".memtool.lock" && base != ".memtool-policy.json" { // the policy record is plain by design
			t.Errorf("%s is not encrypted: %q", p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// encryptedWith wraps a store in encryption with key.
func encryptedWith(t *testing.T, key encrypt.Key) func(memtool.Store) memtool.Store {
	return func(s memtool.Store) memtool.Store {
		e, err := encrypt.New(s, []encrypt.Key{key}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}
