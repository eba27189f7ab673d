package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// memtool search over an encrypted store in which a file does not open
// (here one written in the clear by hand) prints the lines of the files
// that do, names the one it could not read on stderr, without its
// content, and exits 2, as grep does when it could not read a file.
func TestSearchUnreadableFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"encrypt":true}`), 0o600)
	key, _ := encrypt.NewKey("k")
	env := []string{"MEMTOOL_KEY=" + key.Text()}
	for name, text := range map[string]string{"/memories/a.md": "no coffee", "/memories/d/b.md": "coffee, black"} {
		if out, stderr, code := runMemtoolEnv(t, env, "create", "--store", dir, "--policy", policy, "--text", text, name); code != 0 {
			t.Fatalf("create %s: exit %d, %q, %q", name, code, out, stderr)
		}
	}
	os.WriteFile(filepath.Join(dir, "c.md"), []byte("secret coffee typed by hand\n"), 0o600)

	out, stderr, code := runMemtoolEnv(t, env, "search", "--store", dir, "--policy", policy, "coffee")
	wantOut := "/memories/a.md:1:no coffee\n/memories/d/b.md:1:coffee, black\n"
	wantErr := "memtool search: 1 file could not be read, so it was not searched: /memories/c.md. View it to see why.\n"
	if code != exitSearchError || out != wantOut || stderr != wantErr {
		t.Errorf("search: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", code, out, stderr, exitSearchError, wantOut, wantErr)
	}
	out, stderr, code = runMemtoolEnv(t, env, "search", "--store", dir, "--policy", policy, "tea")
	if code != exitSearchError || out != "" || stderr != wantErr {
		t.Errorf("search without a match: exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, stderr, exitSearchError, wantErr)
	}
}
