package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestServeReplicasUnderAllPolicies runs two memtool serve processes on
// one PostgreSQL database under every policy (each replica with its own
// audit log), and 6 clients spread over both inserting lines into one
// file while 2 delete it and create it anew: no acknowledged insert is
// lost, exactly one of racing creates wins, and history keeps every
// content a change replaced (see checkHistory).
func TestServeReplicasUnderAllPolicies(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	key, _ := encrypt.NewKey("k1")
	tmp := t.TempDir()
	const all = `{"encrypt":true,"history":{"max_versions":1000},"expiry":true,"limits":{"max_file_size":65536,"max_files":1000},"secrets":"redact","audit":%q}`
	env := func(i int) []string {
		return policyEnv(t, fmt.Sprintf(all, filepath.Join(tmp, fmt.Sprintf("audit%d.jsonl", i))), key)
	}
	token := addKeyEnv(t, env(9), url)
	bases := []string{startServeEnv(t, plainBinary(t), url, env(0), "--rate", "-1").url, startServeEnv(t, plainBinary(t), url, env(1), "--rate", "-1").url}
	send := func(c int, body map[string]any) (bool, string) {
		status, answer, err := post(bases[c%2], token, jsonLine(body))
		if err != nil || status != 200 {
			t.Errorf("client %d: %d %v %s", c, status, err, answer)
			return false, answer
		}
		return !strings.Contains(answer, `"is_error":true`), answer
	}
	if ok, answer := send(0, createInput(histFile, "GEN 0\nEND")); !ok {
		t.Fatal(answer)
	}
	const inserters, deleters, inserts, cycles = 6, 2, 20, 5
	acked, created, deletes := map[string]bool{}, map[string]bool{"GEN 0": true}, 0
	var mu sync.Mutex
	var wg, dwg sync.WaitGroup
	done := make(chan struct{})
	for c := range inserters {
		wg.Go(func() {
			// At least inserts, and on until the deleters are done.
			for j := 0; ; j++ {
				select {
				case <-done:
					if j >= inserts {
						return
					}
				default:
				}
				m := fmt.Sprintf("<ins %d.%d>", c, j)
				ok, ans := send(c, map[string]any{"command": "insert", "path": histFile, "insert_line": 1, "insert_text": m + "\n"})
				mu.Lock()
				acked[m] = ok
				if !ok && !strings.Contains(ans, "does not exist") {
					t.Errorf("insert %s: %s", m, ans)
				}
				mu.Unlock()
			}
		})
	}
	for d := range deleters {
		dwg.Go(func() {
			for g := range cycles {
				gone, _ := send(d, map[string]any{"command": "delete", "path": histFile})
				made, _ := send(d+1, createInput(histFile, fmt.Sprintf("GEN %d.%d\nEND", d, g)))
				mu.Lock()
				if gone {
					deletes++
				}
				created[fmt.Sprintf("GEN %d.%d", d, g)] = made
				mu.Unlock()
				for range 4 {
					send(d, map[string]any{"command": "view", "path": "/memories"})
				}
			}
		})
	}
	dwg.Wait()
	close(done)
	wg.Wait()
	for g, ok := range created {
		if !ok {
			delete(created, g)
		}
	}
	st := openViaTenant(t, url, "alice", env(2))
	checkHistory(t, st, acked, created, deletes)
}

// addKeyEnv is addKey for tenant alice, with the write scope, in env.
func addKeyEnv(t *testing.T, env []string, url string) string {
	t.Helper()
	out, errOut, code := runMemtool(t, childEnv(env...), "", "keys", "add", "--store", url, "--tenant", "alice", "--scope", "write")
	if code != 0 {
		t.Fatalf("keys add: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
