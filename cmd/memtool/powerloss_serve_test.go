//go:build linux

package main

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestPowerLossAfterServe loses the power right after memtool serve, on a
// directory store under history, answered each of its write routes: the
// server is killed (SIGKILL) and the image taken as it is. Every change
// answered 2xx is there: a create in new nested directories, a PUT, a
// directory made with its parents, the delete of a directory, the revert
// of a file deleted with it, and the rename of a directory.
func TestPowerLossAfterServe(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 64<<20, func(t *testing.T, p powerLoss) {
		store := filepath.Join(p.Dir, "store")
		env := []string{"MEMTOOL_POLICY=" + writePolicy(t, `{"history":{}}`)}
		token := addKeyEnv(t, env, store)
		p.Crash()
		srv, base := csStartServe(t, store, env)
		q := url.QueryEscape
		steps := []struct {
			method, route, body string
			want                int
		}{
			{"POST", "/v1/memory", `{"command":"create","path":"/memories/a/b/c/f1.md","file_text":"deep\n"}`, 200},
			{"PUT", "/v1/file?path=" + q("/memories/a/b/f2.md"), "put\n", 200},
			{"POST", "/v1/dir?parents=true&path=" + q("/memories/empty/one"), "", 201},
			{"POST", "/v1/memory", `{"command":"create","path":"/memories/gone/f3.md","file_text":"to revert\n"}`, 200},
			{"DELETE", "/v1/entry?recursive=true&path=" + q("/memories/gone"), "", 204},
			{"POST", "/v1/revert?n=1&path=" + q("/memories/gone/f3.md"), "", 204},
			// Last: what comes after a change made without an fsync of its
			// own would commit it (ext4's journal) and hide the fault.
			{"POST", "/v1/rename", `{"from":"/memories/a/b","to":"/memories/empty/b"}`, 204},
		}
		for _, s := range steps {
			code, body, err := do(s.method, base+s.route, token, s.body)
			if err != nil || code != s.want {
				t.Fatalf("%s %s: %d %q %v; want %d", s.method, s.route, code, body, err, s.want)
			}
		}
		srv.Process.Kill()
		srv.Wait()
		p.Crash()
		view := func(path string) string {
			t.Helper()
			out, stderr, _ := runBuild(t, plainBinary(t), childEnv(env...), "", "view", "--store", store, "--tenant", "alice", path)
			return out + stderr
		}
		for path, text := range map[string]string{
			"/memories/empty/b/c/f1.md": "deep",
			"/memories/empty/b/f2.md":   "put",
			"/memories/gone/f3.md":      "to revert",
			"/memories/empty/one":       "\t/memories/empty/one\n",
		} {
			if out := view(path); !strings.Contains(out, text) {
				t.Errorf("after the power loss, %s: %s; want %q", path, out, text)
			}
		}
		if out := view("/memories/a"); strings.Contains(out, "/memories/a/b") {
			t.Errorf("after the power loss, the renamed directory is back: %s", out)
		}
	})
}
