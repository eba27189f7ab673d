package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/memtool/memtool/storeurl"
)

// version is the release's version, set by release builds with
// -ldflags "-X main.version=v1.2.3" (see .goreleaser.yaml); when empty,
// memtool version shows the module version the go command recorded.
var version string

func setupVersion(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		bi, _ := debug.ReadBuildInfo()
		text := versionText(stamped(bi, version), storeurl.LeftOut()) + leftOutCommands()
		if _, err := fmt.Fprint(env.stdout, text); err != nil {
			return exitBrokenIO
		}
		return exitOK
	}
}

// versionText is memtool version's output: the version line, then the
// store URL schemes this build leaves out, if any, with the build tags
// that add them.
func versionText(bi *debug.BuildInfo, leftOut []string) string {
	text := versionLine(bi) + "\n"
	if len(leftOut) > 0 {
		text += "stores left out of this build:\n  " + strings.Join(leftOut, "\n  ") + "\n"
	}
	return text
}

// leftOutCommands is the part of memtool version's output that names the
// verbs this build leaves out, with the build tags that add them ("" when
// it has them all).
func leftOutCommands() string {
	var tags []string
	verbs := map[string][]string{}
	for _, c := range commands() {
		if c.leftOut == "" {
			continue
		}
		if verbs[c.leftOut] == nil {
			tags = append(tags, c.leftOut)
		}
		verbs[c.leftOut] = append(verbs[c.leftOut], c.name)
	}
	if len(tags) == 0 {
		return ""
	}
	text := "commands left out of this build:\n"
	for _, tag := range tags {
		text += "  " + strings.Join(verbs[tag], ", ") + ": rebuild with -tags " + tag + "\n"
	}
	return text
}

// stamped returns bi with the main module's version set to v, if v is not
// "" (a release build's -X main.version).
func stamped(bi *debug.BuildInfo, v string) *debug.BuildInfo {
	if bi == nil || v == "" {
		return bi
	}
	c := *bi
	c.Main.Version = v
	return &c
}

// versionLine says which memtool this is: the module version the binary
// was built at ("(devel)" when built from a checkout), the VCS revision
// and time the go command recorded, if any, and the Go version.
func versionLine(bi *debug.BuildInfo) string {
	if bi == nil {
		return "memtool (unknown version: no build information)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var vcs []string
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		vcs = append(vcs, "revision "+rev)
	}
	if t := settings["vcs.time"]; t != "" {
		vcs = append(vcs, t)
	}
	if settings["vcs.modified"] == "true" {
		vcs = append(vcs, "with uncommitted changes")
	}
	line := "memtool " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return line + ", " + bi.GoVersion
}
