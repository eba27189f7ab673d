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
