package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// TestMigrateForceTellsWhatTheTargetKeeps: --force copies into a target
// that holds something; what it held that the source has not stays, and
// the summary says so, naming it, so that the user can tell the target
// from a copy of the source. It once said only "copied ... every file
// verified", as for a target that is now the source's copy.
func TestMigrateForceTellsWhatTheTargetKeeps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tmp, src := seededSource(t, "")
	for _, dst := range []string{filepath.Join(tmp, "dst"), "sqlite://" + filepath.Join(tmp, "dst.db"), "file+blob://" + filepath.Join(tmp, "bucket")} {
		s := openTestStore(t, dst, "")
		if err := s.Mkdir(ctx, "old"); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteFile(ctx, "old/stale.md", []byte("not the source's"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		out := migrateOK(t, "--from", src, "--to", dst, "--force")
		if !strings.Contains(out, "2 entries the source has not") || !strings.Contains(out, "/memories/old/stale.md") {
			t.Errorf("migrate --force into %s holding /memories/old/stale.md: the summary %q does not say it is left there", dst, out)
		}
		if out := migrateOK(t, "--from", src, "--to", filepath.Join(t.TempDir(), "new"), "--force"); strings.Contains(out, "source has not") {
			t.Errorf("into an empty target: %q", out)
		}
	}
}
