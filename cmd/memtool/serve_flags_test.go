package main

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/server"
)

// The bounds of memtool serve's flags reach the server's Config, with the
// server's defaults when not given, and bad ones are usage errors.
func TestServeFlagBounds(t *testing.T) {
	parse := func(args ...string) (server.Config, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		options := serveFlags(fs)
		if err := fs.Parse(args); err != nil {
			return server.Config{}, err
		}
		o, err := options()
		return o.bounds, err
	}
	cfg, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxTenants != server.DefaultMaxTenants || cfg.TenantIdle != server.DefaultTenantIdle ||
		cfg.FailRate != server.DefaultFailRate || cfg.FailBurst != server.DefaultFailBurst {
		t.Errorf("defaults: %d tenants, idle %v, fail rate %v burst %d", cfg.MaxTenants, cfg.TenantIdle, cfg.FailRate, cfg.FailBurst)
	}
	cfg, err = parse("--max-tenants", "7", "--tenant-idle", "90s", "--fail-rate", "0.5", "--fail-burst", "3")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxTenants != 7 || cfg.TenantIdle != 90*time.Second || cfg.FailRate != 0.5 || cfg.FailBurst != 3 {
		t.Errorf("given: %d tenants, idle %v, fail rate %v burst %d", cfg.MaxTenants, cfg.TenantIdle, cfg.FailRate, cfg.FailBurst)
	}
	if cfg, _ = parse("--fail-rate", "-1"); cfg.FailRate >= 0 {
		t.Errorf("--fail-rate -1: %v, want no limit (negative)", cfg.FailRate)
	}
	for _, bad := range [][]string{{"--max-tenants", "0"}, {"--max-tenants", "-3"}, {"--tenant-idle", "0s"}, {"--fail-rate", "0"}, {"--burst", "-1"}, {"--fail-burst", "-2"}, {"--rate", "NaN"}, {"--fail-rate", "nan"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("serve %s: no error", strings.Join(bad, " "))
		}
		_, errOut, code := runCLI(t, nil, "", append([]string{"serve", "--store", filepath.Join(t.TempDir(), "m")}, bad...)...)
		if code != exitUsage || !strings.Contains(errOut, bad[0]) {
			t.Errorf("memtool serve %s: exit %d, %q; want a usage error naming %s", strings.Join(bad, " "), code, errOut, bad[0])
		}
	}
	out, errOut, _ := runCLI(t, nil, "", "serve", "-h")
	for _, name := range []string{"-max-tenants", "-tenant-idle", "-fail-rate", "-fail-burst"} {
		if !strings.Contains(out+errOut, name) {
			t.Errorf("memtool serve -h does not list %s", name)
		}
	}
}

// --fail-rate and --fail-burst reach the running server: past the burst of
// failed authentications, a client address gets 429 before its token is
// checked, a good token included.
func TestServeFailRate(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "memories")
	good := addKey(t, url, "alice", "write")
	p := startServe(t, plainBinary(t), url, "--fail-rate", "0.001", "--fail-burst", "2")
	unknown := "mt_0123456789abcdef_" + strings.Repeat("0", 64)
	for i, want := range []int{401, 401, 429} {
		if status, body := mustPost(t, p.url, unknown, `{"command":"view","path":"/memories"}`); status != want {
			t.Fatalf("unknown token, try %d: HTTP %d %s, want %d", i+1, status, body, want)
		}
	}
	if status, body := mustPost(t, p.url, good, `{"command":"view","path":"/memories"}`); status != 429 {
		t.Errorf("a good token after the failures: HTTP %d %s, want 429", status, body)
	}
}
