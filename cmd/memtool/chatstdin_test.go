//go:build claude

package main

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// TestChatStdinLineTooLongFails: a line chat cannot read (longer than its
// 1 MiB) ends the chat with exit status 4 and says so on stderr, as exec
// reports a stdin it cannot read. It ended the chat as Ctrl-D does, with
// exit status 0 and nothing said, the message never sent.
func TestChatStdinLineTooLongFails(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(claudetest.Turn{Text: "hi"}, claudetest.Turn{Text: "hi"})
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}
	stdin := "hello\n" + strings.Repeat("x", 2<<20) + "\nthere\n"
	_, errOut, code := runCLI(t, vars, stdin, "chat", "--store", "mem:")
	if code != exitBrokenIO || !strings.Contains(errOut, "reading stdin") {
		t.Errorf("chat with a line too long to read: exit %d, stderr %q; want exit %d naming stdin", code, errOut, exitBrokenIO)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (the line before)", n)
	}
}
