//go:build linux

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// migrateFdLimit is the limit on open files (RLIMIT_NOFILE, soft and
// hard) under which TestMigrateManyTenantsFewFiles runs migrate: far fewer
// than its tenants' stores would take if they were all open at once.
const migrateFdLimit = 64

// runMigrateFdLimited runs `memtool migrate args` under migrateFdLimit.
func runMigrateFdLimited(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// The shell's ulimit sets the hard limit too: the Go runtime raises
	// the soft limit to the hard one when it starts.
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, migrateFdLimit)
	return runBuild(t, "sh", childEnv(), "", append([]string{"-c", script, memtoolBinary(t), "migrate"}, args...)...)
}

// TestMigrateManyTenantsFewFiles: migrate --all-tenants kept every
// tenant's source and target store open at once, so a store with more
// tenants than the open-file limit allows (1,500 under the usual 1,024)
// could not be migrated at all: "too many open files", exit 3. It opens
// one tenant's stores at a time, and keeps its promises: a target that
// is not empty refused before anything is written, --force completing
// the copy and naming what the target kept.
func TestMigrateManyTenantsFewFiles(t *testing.T) {
	t.Parallel()
	const n = 150
	ctx := context.Background()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	tenant := func(i int) string { return fmt.Sprintf("t%03d", i) }
	for i := range n {
		s, closer, err := openStore(ctx, src, tenant(i), true)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteFile(ctx, "a.md", []byte("tenant "+tenant(i)), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		closer.Close()
	}
	for _, to := range []string{filepath.Join(tmp, "dst"), "sqlite://" + filepath.Join(tmp, "dst.db")} {
		out, stderr, code := runMigrateFdLimited(t, "--from", src, "--to", to, "--all-tenants")
		if code != exitOK || stderr != "" || !strings.HasPrefix(out, fmt.Sprintf("copied %d files", n)) || !strings.Contains(out, fmt.Sprintf("of %d tenants", n)) {
			t.Fatalf("migrate --all-tenants of %d tenants to %s under ulimit -n %d: exit %d\nstdout: %s\nstderr: %s", n, to, migrateFdLimit, code, out, stderr)
		}
		for i := range n {
			s, closer, err := openStore(ctx, to, tenant(i), false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ReadFile(ctx, "a.md", 1<<10)
			closer.Close()
			if err != nil || string(got) != "tenant "+tenant(i) {
				t.Fatalf("tenant %s of %s: a.md is %q, %v", tenant(i), to, got, err)
			}
		}

		// The last tenant's target gets a file the source has not: the
		// target is refused, and nothing is written into it.
		last := tenant(n - 1)
		s, closer, err := openStore(ctx, to, last, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteFile(ctx, "extra.md", []byte("kept"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		closer.Close()
		if out, stderr, code = runMigrateFdLimited(t, "--from", src, "--to", to, "--all-tenants"); code != exitFailed || out != "" || !strings.Contains(stderr, "the target is not empty") {
			t.Fatalf("migrate --all-tenants into a full target: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
		}
		out, stderr, code = runMigrateFdLimited(t, "--from", src, "--to", to, "--all-tenants", "--force")
		if code != exitOK || stderr != "" || !strings.Contains(out, "left there (--force replaces, it does not delete): ") || !strings.Contains(out, last+":/memories/extra.md") {
			t.Fatalf("migrate --all-tenants --force: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
		}
	}
}
