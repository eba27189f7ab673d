//go:build claude

package main

// The tests of run and chat that call them in this process, which has them
// only when built with -tags claude (.ci/run runs them so). The tests that
// run the binary build it with the tag themselves (claudeBinary).

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// The 200 runs of TestRunKeepsOrderInTurn, in this process.
func TestRunKeepsOrderInProcess(t *testing.T) {
	t.Parallel()
	runs := 200 // the bar; -short runs 20
	if testing.Short() {
		runs = 20
	}
	checkRunOrder(t, runs, func(srv *claudetest.Server, dir string) (string, int) {
		vars := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}
		_, errOut, code := runCLI(t, vars, "", "run", "--store", dir, "take notes")
		return errOut, code
	})
}

// --allow-bash without --workdir is a usage error; with it, a warning.
func TestAllowBashNeedsWorkdir(t *testing.T) {
	t.Parallel()
	_, errOut, code := runCLI(t, map[string]string{"ANTHROPIC_API_KEY": "k"}, "", "run", "--store", "mem:", "--allow-bash", "task")
	if code != exitUsage || !strings.Contains(errOut, "--allow-bash needs --workdir") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// An empty --model is refused before anything is sent.
func TestEmptyModel(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(claudetest.Turn{Text: "hi"})
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	for _, verb := range [][]string{{"run", "task"}, {"chat"}} {
		_, errOut, code := runCLI(t, vars, "", append([]string{verb[0], "--store", "mem:", "--model", " "}, verb[1:]...)...)
		if code != exitUsage || !strings.Contains(errOut, "--model") {
			t.Errorf("%s --model ' ': exit %d, %q", verb[0], code, errOut)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// /help in chat is answered by memtool and never sent to Claude.
func TestChatHelpIsLocal(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(claudetest.Turn{Text: "hi"})
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	out, errOut, code := runCLI(t, vars, "/help\n/exit\n", "chat", "--store", "mem:")
	if code != exitOK || out != "" || !strings.Contains(errOut, "/exit, /quit") {
		t.Errorf("chat /help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("/help sent %d requests to the API", n)
	}
}
