//go:build claude

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// hostileText is a reply a prompt-injected model may write (from a memory,
// a file or a tool result it read): an OSC 52 that sets the clipboard, a
// window title, a screen clear, a C1 CSI and a carriage return that hides
// the line before it, between lines that must stay lines.
const hostileText = "one\x1b]52;c;ZXZpbA==\x07\n\x1b]0;title\x1b\\two\x1b[2J\u009b31m\rthree\tfour"

// runOnTerminal runs memtool in this process with stdout a terminal (as
// cliEnv says), against a fake API answering turns.
func runOnTerminal(t *testing.T, terminal bool, stdin string, turns []claudetest.Turn, args ...string) (string, int) {
	t.Helper()
	srv := claudetest.NewServer(turns...)
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }, stdoutTerminal: terminal}
	code := runWithEnv(context.Background(), args, env)
	if code != exitOK {
		t.Fatalf("memtool %v: exit %d, stderr %q", args, code, errb.String())
	}
	return out.String(), code
}

// TestRunChatEscapeModelTextOnTerminal: run and chat show Claude's text
// on a terminal with its control characters (but newline and tab) escaped,
// as search shows memory text (terminalSafe): a model led to write escape
// sequences cannot set the clipboard, retitle the window, clear the screen
// or hide text. They wrote it raw. Piped, run's text stays exact.
func TestRunChatEscapeModelTextOnTerminal(t *testing.T) {
	t.Parallel()
	want := `one\x1b]52;c;ZXZpbA==\x07` + "\n" + `\x1b]0;title\x1b\two\x1b[2J\u009b31m\rthree` + "\tfour\n"
	for _, args := range [][]string{{"run", "--store", "mem:", "task"}, {"chat", "--store", "mem:"}} {
		out, _ := runOnTerminal(t, true, "hi\n", []claudetest.Turn{{Text: hostileText}}, args...)
		if out != want {
			t.Errorf("memtool %s on a terminal wrote %q, want %q", args[0], out, want)
		}
	}
	out, _ := runOnTerminal(t, false, "", []claudetest.Turn{{Text: hostileText}}, "run", "--store", "mem:", "task")
	if out != hostileText+"\n" {
		t.Errorf("memtool run to a pipe wrote %q, want Claude's text exactly, %q", out, hostileText+"\n")
	}
}
