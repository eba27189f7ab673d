package storeurl_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/internal/gotool"
	"github.com/memtool/memtool/storeurl"
)

// TestHelperDirIsClaudes: a helper: URL names the directory that
// claude.HelperDir gives for its base, though storeurl writes the join
// out itself (see TestStoreURLLeavesOutClaude).
func TestHelperDirIsClaudes(t *testing.T) {
	for _, base := range []string{"/base", filepath.Join(t.TempDir(), "helper"), "/a/b/"} {
		got, ok := storeurl.Dir("helper:" + base)
		if want := claude.HelperDir(base); !ok || got != want {
			t.Errorf("Dir(helper:%s) = %q, %v; claude.HelperDir = %q", base, got, ok, want)
		}
	}
}

// TestStoreURLLeavesOutClaude: opening store URLs does not link the
// Anthropic SDK (nor memtool's adapter to it), whose package
// initialisation every program importing storeurl would otherwise run.
func TestStoreURLLeavesOutClaude(t *testing.T) {
	leftOut := func(pkg string) bool {
		return pkg == "github.com/memtool/memtool/claude" || strings.HasPrefix(pkg, "github.com/anthropics/")
	}
	for _, pkg := range gotool.Deps(t, "", ".") {
		if leftOut(pkg) {
			t.Errorf("storeurl imports %s", pkg)
		}
	}
	if !slices.ContainsFunc(gotool.Deps(t, "", "../claude"), leftOut) {
		t.Errorf("claude's dependencies are none of the names the check above looks for")
	}
}
