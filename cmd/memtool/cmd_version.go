package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"
)

func setupVersion(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		bi, _ := debug.ReadBuildInfo()
		if _, err := fmt.Fprintln(env.stdout, versionLine(bi)); err != nil {
			return exitBrokenIO
		}
		return exitOK
	}
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
