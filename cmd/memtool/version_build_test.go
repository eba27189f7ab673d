package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/memtool/memtool/storeurl"
)

// TestVersionLeftOut: memtool version lists the store schemes this build
// leaves out, with the tag that adds each (gs and azblob in the default
// build, none with -tags gcs,azure).
func TestVersionLeftOut(t *testing.T) {
	t.Parallel()
	out := mustRunCLI(t, nil, "", "version")
	left := storeurl.LeftOut()
	for _, line := range left {
		if !strings.Contains(out, "\n  "+line+"\n") {
			t.Errorf("memtool version lacks %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "left out") != (len(left) > 0) {
		t.Errorf("memtool version, with %d schemes left out:\n%s", len(left), out)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.99"}
	if got, want := versionText(bi, []string{"gs: rebuild with -tags gcs"}), "memtool (devel), go1.99\nstores left out of this build:\n  gs: rebuild with -tags gcs\n"; got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	if got, want := versionText(bi, nil), "memtool (devel), go1.99\n"; got != want {
		t.Errorf("versionText with nothing left out = %q, want %q", got, want)
	}
}

// TestVersionStamped: a release build's -X main.version replaces the
// module version the go command recorded, and nothing else.
func TestVersionStamped(t *testing.T) {
	t.Parallel()
	// -X sets only a package-level string variable: .goreleaser.yaml
	// names main.version.
	var _ *string = &version
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}
	if got, want := versionLine(stamped(bi, "v1.4.0")), "memtool v1.4.0 (revision abc123), go1.99"; got != want {
		t.Errorf("stamped: %q, want %q", got, want)
	}
	if bi.Main.Version != "(devel)" {
		t.Errorf("stamped changed its argument: %q", bi.Main.Version)
	}
	if got := stamped(bi, ""); got != bi {
		t.Errorf("stamped with no version changed the build info")
	}
	if stamped(nil, "v1") != nil {
		t.Errorf("stamped(nil) is not nil")
	}
}
