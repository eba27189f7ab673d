//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/encrypt"
)

// TestPowerLossAfterKeygenAndInit loses the power right after memtool
// keygen --out, memtool init (on an encrypted directory store and a
// SQLite file with a tenant, both sealed with that key file) and memtool
// keygen --rotate have said they are done: the key file holds the new key
// first and the old one after it, and the files init seeded read with it.
// A key file lost or emptied by a power loss would leave every memory
// sealed with it unreadable.
func TestPowerLossAfterKeygenAndInit(t *testing.T) {
	t.Parallel()
	eachPowerLoss(t, 32<<20, func(t *testing.T, p powerLoss) {
		keyFile := filepath.Join(p.Dir, "memtool.key")
		policy := writePolicy(t, `{"encrypt":true,"history":{}}`)
		env := []string{"MEMTOOL_KEY_FILE=" + keyFile, "MEMTOOL_POLICY=" + policy}
		run := func(args ...string) string {
			t.Helper()
			out, stderr, code := runBuild(t, plainBinary(t), childEnv(env...), "", args...)
			if code != 0 {
				t.Fatalf("memtool %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			return out
		}
		keys := func() []encrypt.Key {
			t.Helper()
			data, err := os.ReadFile(keyFile)
			if err != nil {
				t.Fatalf("after the power loss, the key file: %v", err)
			}
			ks, err := encrypt.ParseKeys(string(data))
			if err != nil {
				t.Fatalf("after the power loss, the key file holds %q: %v", data, err)
			}
			return ks
		}
		run("keygen", "--id", "first", "--out", keyFile)
		p.Crash()
		if ks := keys(); len(ks) != 1 || ks[0].ID != "first" {
			t.Fatalf("after the power loss, the key file holds %v, want the key first", ks)
		}
		stores := [][]string{
			{"--store", filepath.Join(p.Dir, "store")},
			{"--store", "sqlite://" + filepath.Join(p.Dir, "memory.db"), "--tenant", "alice"},
		}
		seeded := map[int][]string{}
		for i, s := range stores {
			for _, l := range strings.Split(run(append([]string{"init"}, s...)...), "\n") {
				if p, ok := strings.CutPrefix(l, "created "); ok {
					seeded[i] = append(seeded[i], p)
				}
			}
			if len(seeded[i]) == 0 {
				t.Fatalf("init %v seeded nothing", s)
			}
		}
		p.Crash()
		run("keygen", "--id", "second", "--rotate", keyFile)
		p.Crash()
		if ks := keys(); len(ks) != 2 || ks[0].ID != "second" || ks[1].ID != "first" {
			t.Fatalf("after the power loss, the key file holds %v, want the keys second and first", ks)
		}
		for i, s := range stores {
			for _, path := range seeded[i] {
				out := run(append([]string{"view", path}, s...)...)
				if strings.TrimSpace(out) == "" {
					t.Errorf("after the power loss, %s of %v reads %q", path, s, out)
				}
			}
		}
	})
}
