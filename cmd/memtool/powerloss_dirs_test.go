//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/encrypt"
)

// TestPowerLossAfterDirectoryChanges loses the power right after each
// change to directories was answered: a create in new nested directories,
// the rename of a directory into a new one, the delete of a directory.
// After each, the store holds what was answered, on a directory store and
// a SQLite file with no policy, and on a directory store under
// encryption, history and expiry, where history still has the versions
// of the files deleted with their directory. Each change is made on every
// store before the power goes; the plain directory store comes last,
// since a later fsync anywhere on the file system (expiry's index, after
// a rename, or another store's) commits the journal, and with it a
// directory change the store itself left unsynced.
func TestPowerLossAfterDirectoryChanges(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		key, _ := encrypt.NewKey("k1")
		plain := policyEnv(t, `{}`, key)
		stacked := policyEnv(t, `{"encrypt":true,"history":{},"expiry":true}`, key)
		stores := []struct {
			url string
			env []string
		}{
			{filepath.Join(p.Dir, "stacked"), stacked},
			{"sqlite://" + filepath.Join(p.Dir, "plain.db"), plain},
			{filepath.Join(p.Dir, "plain"), plain},
		}
		// step runs each command on every store, loses the power, and checks
		// what each path holds after it ("" for a path that must be gone).
		step := func(cmds []map[string]any, want map[string]string) {
			t.Helper()
			for _, s := range stores {
				for _, c := range cmds {
					if out := plExec(t, s.env, s.url, c); strings.Contains(out, `"is_error":true`) {
						t.Fatalf("%s: %v: %s", s.url, c, out)
					}
				}
			}
			p.Crash()
			for _, s := range stores {
				for path, text := range want {
					out := plExec(t, s.env, s.url, map[string]any{"command": "view", "path": path})
					if text == "" && !strings.Contains(out, `"is_error":true`) || !strings.Contains(out, text) {
						t.Errorf("%s: after the power loss, %s: %s; want %q", s.url, path, out, text)
					}
				}
			}
		}
		step([]map[string]any{
			{"command": "create", "path": "/memories/a/b/c/f1.md", "file_text": "deep\n"},
			{"command": "create", "path": "/memories/a/b/f2.md", "file_text": "edited later\n"},
			{"command": "str_replace", "path": "/memories/a/b/f2.md", "old_str": "edited later", "new_str": "edited"},
			{"command": "create", "path": "/memories/a/g.md", "file_text": "kept\n"},
		}, map[string]string{"/memories/a/b/c/f1.md": "deep", "/memories/a/b/f2.md": "edited", "/memories/a/g.md": "kept"})
		step([]map[string]any{{"command": "rename", "old_path": "/memories/a/b", "new_path": "/memories/x/y/b"}},
			map[string]string{"/memories/a/b": "", "/memories/x/y/b/c/f1.md": "deep", "/memories/x/y/b/f2.md": "edited"})
		step([]map[string]any{{"command": "delete", "path": "/memories/x"}},
			map[string]string{"/memories/x": "", "/memories/a/g.md": "kept"})
		if out, stderr, code := runBuild(t, plainBinary(t), childEnv(stacked...), "", "history", "--store", stores[0].url, "/memories/x/y/b/f2.md"); code != 0 || !strings.Contains(out, "\tdelete\t") {
			t.Errorf("after the power loss, the history of the deleted f2.md: exit %d, %q, %q", code, out, stderr)
		}
	})
}

// plExec runs one command of the memory tool with memtool exec on the
// store url, in the environment env, and returns its answer.
func plExec(t *testing.T, env []string, url string, cmd map[string]any) string {
	t.Helper()
	out, stderr, code := runBuild(t, plainBinary(t), childEnv(env...), jsonLine(cmd), "exec", "--store", url)
	if code != 0 {
		t.Fatalf("%s: memtool exec: exit %d: %s", url, code, stderr)
	}
	return out
}

// TestPowerLossAfterRestoreIntoEmptiedDirectory loses the power right
// after gc moved every file of a directory to its trash, and again right
// after restore brought one back into that directory: the file is back
// where it was.
func TestPowerLossAfterRestoreIntoEmptiedDirectory(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 32<<20, func(t *testing.T, p powerLoss) {
		store := filepath.Join(p.Dir, "store")
		policy := writePolicy(t, `{"expiry":true,"history":{}}`)
		run := func(args ...string) string {
			t.Helper()
			out, stderr, code := runBuild(t, plainBinary(t), childEnv(), "", append(args, "--store", store, "--policy", policy)...)
			if code != 0 {
				t.Fatalf("memtool %s: exit %d: %s", args[0], code, stderr)
			}
			return out
		}
		access := map[string]int64{}
		for _, name := range []string{"old/deep/f1.md", "old/f2.md"} {
			run("create", "--text", "of "+name+"\n", "/memories/"+name)
			access[name] = time.Now().Unix() - 40*24*3600
		}
		run("create", "--text", "new\n", "/memories/new.md")
		access["new.md"] = time.Now().Unix()
		index, _ := json.Marshal(map[string]any{"version": 1, "access": access})
		if err := os.WriteFile(filepath.Join(store, ".memtool-expiry.json"), index, 0o600); err != nil {
			t.Fatal(err)
		}
		syncTree(t, store)
		if out := run("gc", "--unused-for", "30d"); strings.Count(out, "expired /memories/old/") != 2 {
			t.Fatalf("gc did not expire both files of old/:\n%s", out)
		}
		p.Crash()
		run("restore", "/memories/old/deep/f1.md")
		p.Crash()
		if data, err := os.ReadFile(filepath.Join(store, "old/deep/f1.md")); string(data) != "of old/deep/f1.md\n" {
			t.Errorf("after the power loss, the restored old/deep/f1.md holds %q, %v", data, err)
		}
		if listed := run("restore", "--list"); !strings.Contains(listed, "/memories/old/f2.md") || strings.Contains(listed, "/memories/old/deep/f1.md") {
			t.Errorf("after the power loss, the trash lists:\n%s", listed)
		}
	})
}
