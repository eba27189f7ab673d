package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/internal/gotool"
)

// The default build leaves out the Anthropic SDK (run and chat), which a
// build with -tags claude has.
func TestDefaultBuildLeavesOutTheSDK(t *testing.T) {
	t.Parallel()
	const sdk = "github.com/anthropics/anthropic-sdk-go/v2"
	for _, pkg := range gotool.Deps(t, "", ".") {
		if strings.HasPrefix(pkg, sdk) || strings.HasPrefix(pkg, "github.com/memtool/memtool/claude") && pkg != "github.com/memtool/memtool/claude/template" {
			t.Errorf("the default build imports %s", pkg)
		}
	}
	if !slices.Contains(gotool.Deps(t, claudeTag, "."), sdk) {
		t.Errorf("the build with -tags %s does not import %s: the check above looks for the wrong name", claudeTag, sdk)
	}
}

// The default binary lists run and chat, and says how to get them: help,
// the verbs themselves (exit 2, nothing sent, whatever the flags), and
// memtool version. The binary built with the tag has them (every test of
// run and chat runs it) and says nothing of it.
func TestDefaultBinaryOffersRunAndChat(t *testing.T) {
	t.Parallel()
	const how = "rebuild with -tags claude"
	srv := claudetest.NewServer(claudetest.Turn{Text: "hi"})
	defer srv.Close()
	env := apiEnv(srv)
	// runMemtool would pick the build with the tag for run and chat.
	run := func(bin string, args ...string) (string, string, int) { return runBuild(t, bin, env, "", args...) }
	lean := memtoolBinary(t)
	for _, args := range [][]string{{"run", "task"}, {"run", "--store", "mem:", "--no-such-flag", "task"}, {"chat"}} {
		out, errOut, code := run(lean, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "memtool "+args[0]+": this build of memtool leaves out "+args[0]) || !strings.Contains(errOut, how) {
			t.Errorf("default build, memtool %q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	out, _, code := run(lean, "help")
	for _, verb := range []string{"run", "chat"} {
		if code != exitOK || !strings.Contains(out, "\n  "+verb+" ") || !strings.Contains(out, "[not in this build: -tags claude]") {
			t.Errorf("default build, memtool help (exit %d) does not offer %s:\n%s", code, verb, out)
		}
	}
	out, _, code = run(lean, "version")
	if code != exitOK || !strings.Contains(out, "commands left out of this build:\n  run, chat: "+how+"\n") {
		t.Errorf("default build, memtool version (exit %d):\n%s", code, out)
	}
	out, _, code = run(lean, "chat", "-h")
	if code != exitOK || !strings.HasPrefix(out, "Usage: memtool chat") || !strings.Contains(out, how) {
		t.Errorf("default build, memtool chat -h (exit %d):\n%s", code, out)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the default build sent %d requests to the API", n)
	}

	full := claudeBinary(t)
	for _, verb := range []string{"version", "help"} {
		out, errOut, code := run(full, verb)
		if code != exitOK || strings.Contains(out, "tags claude") {
			t.Errorf("build with -tags claude, memtool %s: exit %d\n%s%s", verb, code, out, errOut)
		}
	}
}
