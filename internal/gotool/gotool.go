// Package gotool runs the go command for tests that check how memtool
// builds: which packages a build links.
package gotool

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Deps returns the import paths of pkg and every package it imports,
// directly or not, in a build with tags (a comma-separated list, "" for
// none), as `go list -deps` gives them; pkg is relative to the test's
// directory. Without a go command on the PATH it skips t, or fails it
// when $CI is "true".
func Deps(t testing.TB, tags, pkg string) []string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no go command on PATH")
		}
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goCmd, "list", "-tags="+tags, "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -tags=%s -deps %s: %v\n%s", tags, pkg, err, out)
	}
	return strings.Fields(string(out))
}
