package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitDirectoryInTheWay: a directory where the template's file
// belongs is not the file "already there": init says what is in the way
// and fails (exit status 1), rather than report it kept and exit 0 with
// guidance telling Claude to read a file that is not there. The other
// files are seeded all the same.
func TestInitDirectoryInTheWay(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.MkdirAll(filepath.Join(dir, "progress.md", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, nil, "", "init", "--store", dir)
	if code != exitFailed || strings.Contains(out, "kept    /memories/progress.md (already there)") || !strings.Contains(stderr, "/memories/progress.md is a directory") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "features.md")); err != nil {
		t.Errorf("features.md not seeded: %v", err)
	}
	// A file already there is kept, and said to be.
	os.RemoveAll(filepath.Join(dir, "progress.md"))
	os.WriteFile(filepath.Join(dir, "progress.md"), []byte("mine\n"), 0o600)
	out = mustRunCLI(t, nil, "", "init", "--store", dir)
	if !strings.Contains(out, "kept    /memories/progress.md (already there)") {
		t.Errorf("stdout %q", out)
	}
}
