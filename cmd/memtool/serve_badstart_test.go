package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeBadStartCreatesNothing checks that memtool serve refused at
// its start, for a policy file that does not parse, an address it cannot
// listen on, a TLS certificate it cannot load, a --keys store that
// keeps no keys, or an encrypting policy without $MEMTOOL_KEY (with which
// every request would have failed), creates neither the
// store nor its keyring: a mistyped flag leaves no empty store behind.
func TestServeBadStartCreatesNothing(t *testing.T) {
	t.Parallel()
	bin := plainBinary(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"limits":`), 0o600); err != nil {
		t.Fatal(err)
	}
	encrypting := filepath.Join(dir, "encrypt.json")
	if err := os.WriteFile(encrypting, []byte(`{"encrypt":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a bad --policy", []string{"--policy", bad, "--listen", "127.0.0.1:0"}, exitUsage, "bad.json"},
		{"a bad --listen", []string{"--listen", "127.0.0.1:notaport"}, exitFailed, "notaport"},
		{"an encrypting policy without its keys", []string{"--policy", encrypting, "--listen", "127.0.0.1:0"}, exitStore, "MEMTOOL_KEY"},
		{"--keys in a store that keeps none", []string{"--listen", "127.0.0.1:0", "--keys", "mem:"}, exitStore, "keeps no API keys"},
		{"a missing --tls-cert", []string{"--listen", "127.0.0.1:0", "--tls-cert", filepath.Join(dir, "no.crt"), "--tls-key", filepath.Join(dir, "no.key")}, exitFailed, "no.crt"},
	} {
		for _, url := range []string{filepath.Join(dir, "memories"), "sqlite://" + filepath.Join(dir, "m.db")} {
			// A server that starts anyway is stopped at hangGuard, and fails.
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--store", url}, c.args...)...)
			cmd.Env = childEnv()
			var errOut strings.Builder
			cmd.Stderr = &errOut
			cmd.Run()
			cancel()
			if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(errOut.String(), c.says) {
				t.Errorf("serve --store %s with %s: exit %d, %q; want %d naming %s", url, c.name, code, errOut.String(), c.code, c.says)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "m*"))
			if len(left) != 0 {
				t.Errorf("serve --store %s with %s left %v", url, c.name, left)
			}
			for _, f := range left {
				os.RemoveAll(f)
			}
		}
	}
}
