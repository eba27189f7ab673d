package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
)

// TestRekey: files encrypted with an old key are rewritten with the new
// one, after which the old key is no longer needed.
func TestRekey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memories")
	oldKey, _ := encrypt.NewKey("old")
	fs, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := encrypt.New(fs, []encrypt.Key{oldKey}, nil)
	mem := memtool.New(s, nil)
	for _, in := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"alpha"}`,
		`{"command":"create","path":"/memories/d/b.md","file_text":"beta"}`,
	} {
		if r := mem.Run(context.Background(), []byte(in)); r.IsError {
			t.Fatal(r.Text)
		}
	}
	fs.Close()

	keyFile := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(keyFile, []byte(oldKey.String()+"\n"), 0o600)
	if _, stderr, code := runBinary(t, "", "keygen", "--id", "new", "--rotate", keyFile); code != 0 {
		t.Fatalf("keygen --rotate: %d %s", code, stderr)
	}
	out, stderr, code := runMemtoolEnv(t, []string{"MEMTOOL_KEY_FILE=" + keyFile}, "rekey", "--store", dir)
	if code != 0 || out != "re-encrypted 2 files with key new\n" {
		t.Fatalf("rekey: exit %d, %q, %q", code, out, stderr)
	}
	keys, _ := encrypt.ParseKeys(mustRead(t, keyFile))
	fs, err = filestore.Open(dir)
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

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runMemtoolEnv runs the binary with extra environment variables, and
// without any MEMTOOL_KEY or MEMTOOL_KEY_FILE of the test's own.
func runMemtoolEnv(t *testing.T, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(memtoolBinary(t), args...)
	for _, kv := range childEnv(extra...) {
		if (strings.HasPrefix(kv, "MEMTOOL_KEY=") || strings.HasPrefix(kv, "MEMTOOL_KEY_FILE=")) && !contains(extra, kv) {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	checkNoRace(t, errb.String())
	return out.String(), errb.String(), code
}
