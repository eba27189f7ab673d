package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool/claude/claudetest"
)

// A stalled API ends memtool run with a timeout message and exit status 5
// once --timeout has passed, instead of hanging.
func TestRunTimeout(t *testing.T) {
	hang := claudetest.Turn{Text: "Thinking", Hang: true}
	srv := claudetest.NewServer(hang, hang)
	defer srv.Close()
	// The deadline only ends a hung child; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, memtoolBinary(t), "run", "--store", t.TempDir(), "--timeout", "1s", "--retries", "1", "task")
	cmd.Env = apiEnv(srv)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	cmd.Run()
	checkNoRace(t, errOut.String())
	if ctx.Err() != nil {
		t.Fatalf("memtool run hung past --timeout; stderr %q", errOut.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitAPI || !strings.Contains(errOut.String(), "memtool run: timed out: no answer from the Claude API within --timeout") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

// Numeric flags the API would refuse, or that would silently mean
// something else, are usage errors that name the flag; nothing is sent.
func TestRunRefusesBadNumbers(t *testing.T) {
	srv := claudetest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keep", "0"}, "--keep must be 1 or more"},
		{[]string{"--keep", "-2"}, "--keep must be 1 or more"},
		{[]string{"--clear-at", "0"}, "--clear-at must be more than 0"},
		{[]string{"--compact-at", "1000"}, "--compact-at must be at least 50000"},
		{[]string{"--max-tokens", "0"}, "--max-tokens must be more than 0"},
		{[]string{"--max-iterations", "-1"}, "--max-iterations must be 0"},
		{[]string{"--timeout", "0s"}, "--timeout must be more than 0"},
		{[]string{"--retries", "-1"}, "--retries must be 0 or more"},
	} {
		args := append(append([]string{"run", "--store", dir}, tc.args...), "task")
		_, errOut, code := runMemtool(t, apiEnv(srv), "", args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("memtool %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("refused flags sent %d requests", n)
	}
}

// memtool chat takes the same flags: a stalled API ends the turn with the
// timeout message, and the chat's exit status says a turn failed.
func TestChatTimeout(t *testing.T) {
	srv := claudetest.NewServer(claudetest.Turn{Text: "Thinking", Hang: true})
	defer srv.Close()
	// The deadline only ends a hung child; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, memtoolBinary(t), "chat", "--store", t.TempDir(), "--timeout", "1s", "--retries", "0")
	cmd.Env = apiEnv(srv)
	cmd.Stdin = strings.NewReader("hello\n")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	cmd.Run()
	checkNoRace(t, errOut.String())
	if ctx.Err() != nil {
		t.Fatalf("memtool chat hung past --timeout; stderr %q", errOut.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitAPI || !strings.Contains(errOut.String(), "memtool chat: timed out: no answer from the Claude API within --timeout") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
