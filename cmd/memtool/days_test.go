package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseDaysOutOfRange checks that a count of days past what a
// duration holds (about 292 years) is refused, not wrapped around to
// another duration: 213504d wrapped to 25 minutes, so gc --unused-for,
// --grace, a history max_age or a key's --expires given a huge value
// meant "practically for ever" got a short time instead.
func TestParseDaysOutOfRange(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"213504d", "12810240d", "106752d", "106751d24h", "100000d2562047h", "9223372036854775807d"} {
		if d, err := parseDays(bad); err == nil {
			t.Errorf("parseDays(%q) = %v, accepted", bad, d)
		}
	}
	if d, err := parseDays("106751d"); err != nil || d <= 0 {
		t.Errorf("parseDays(106751d) = %v, %v; want about 292 years", d, err)
	}
}

// TestKeysAddExpiresOutOfRange checks that memtool keys add refuses an
// --expires past what it can count, and adds no key.
func TestKeysAddExpiresOutOfRange(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	_, stderr, code := runBinary(t, "", "keys", "add", "--store", dir, "--tenant", "alice", "--expires", "213504d")
	if code != exitUsage || !strings.Contains(stderr, "--expires") {
		t.Errorf("keys add --expires 213504d: exit %d, %q; want %d and a word on --expires", code, stderr, exitUsage)
	}
	if _, err := os.Stat(dir + ".keys"); !os.IsNotExist(err) {
		t.Errorf("a key file was written: %v", err)
	}
}

// TestKeysAddBadTenantCreatesNothing checks that memtool keys add refuses
// a tenant id or a name that no key may have (exit status 2) before it
// opens the store: no store, SQLite file or key file is made.
func TestKeysAddBadTenantCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, url := range []string{filepath.Join(dir, "sub", "memories"), "sqlite://" + filepath.Join(dir, "sub", "m.db")} {
		for _, args := range [][]string{{"--tenant", "../x"}, {"--tenant", "Alice"}, {"--tenant", "alice", "--name", "a\x1b[2Jb"}} {
			args = append([]string{"keys", "add", "--store", url}, args...)
			_, stderr, code := runCLI(t, nil, "", args...)
			if code != exitUsage {
				t.Errorf("memtool %s: exit %d, %q; want %d", strings.Join(args, " "), code, stderr, exitUsage)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
				t.Errorf("memtool %s left %v", strings.Join(args, " "), left)
				for _, f := range left {
					os.RemoveAll(f)
				}
			}
		}
	}
}
