package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateRefusesStoresInMemory: a store that lives in memory (mem:,
// mem+blob://) is gone when memtool exits, and each open is a new, empty
// one. migrate once copied into one, said "copied 1 file … every file
// verified" and exited 0, and the copy was gone as it said so; from one
// it copied nothing and made an empty target. Both are refused now,
// before anything is opened.
func TestMigrateRefusesStoresInMemory(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "")
	dst := filepath.Join(tmp, "dst")
	for _, args := range [][]string{
		{"--from", src, "--to", "mem:"},
		{"--from", src, "--to", "mem+blob://?prefix=x"},
		{"--from", "mem:", "--to", dst},
		{"--from", "mem+blob://", "--to", dst},
	} {
		out, stderr, code := runMigrateBinary(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, "gone when") {
			t.Errorf("migrate %q: exit %d\nstdout: %s\nstderr: %s", args, code, out, stderr)
		}
	}
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("a refused migration from memory made the target")
	}
}
