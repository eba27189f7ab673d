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
	t.Parallel()
	hang := claudetest.Turn{Text: "Thinking", Hang: true}
	srv := claudetest.NewServer(hang, hang)
	defer srv.Close()
	errOut, code := runAgainstHungAPI(t, srv, "", "run", "--store", t.TempDir(), "--timeout", "1s", "--retries", "1", "task")
	if code != exitAPI || !strings.Contains(errOut, "memtool run: timed out: no answer from the Claude API within --timeout") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// runAgainstHungAPI runs the binary on srv, which holds its requests, and
// returns its stderr and exit status; it fails t if memtool is still
// running after 3 minutes.
func runAgainstHungAPI(t *testing.T, srv *claudetest.Server, stdin string, args ...string) (string, int) {
	t.Helper()
	// The deadline only ends a hung child; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryFor(t, args), args...)
	cmd.Env = apiEnv(srv)
	cmd.Stdin = strings.NewReader(stdin)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	cmd.Run()
	checkNoRace(t, errOut.String())
	if ctx.Err() != nil {
		t.Fatalf("memtool %s hung past --timeout; stderr %q", args[0], errOut.String())
	}
	return errOut.String(), cmd.ProcessState.ExitCode()
}

// Numeric flags the API would refuse, or that would silently mean
// something else, are usage errors that name the flag; nothing is sent.
func TestRunRefusesBadNumbers(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	bad := func(want string, flags ...string) usageCase {
		return usageCase{apiEnv(srv), append(append([]string{"run", "--store", dir}, flags...), "task"), want}
	}
	checkUsageErrors(t, srv, []usageCase{
		bad("--keep must be 1 or more", "--keep", "0"),
		bad("--keep must be 1 or more", "--keep", "-2"),
		bad("--clear-at must be more than 0", "--clear-at", "0"),
		bad("--compact-at must be at least 50000", "--compact-at", "1000"),
		bad("--max-tokens must be more than 0", "--max-tokens", "0"),
		bad("--max-iterations must be 0", "--max-iterations", "-1"),
		bad("--timeout must be more than 0", "--timeout", "0s"),
		bad("--retries must be 0 or more", "--retries", "-1"),
	})
}

// memtool chat takes the same flags: a stalled API ends the turn with the
// timeout message, and the chat's exit status says a turn failed.
func TestChatTimeout(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(claudetest.Turn{Text: "Thinking", Hang: true})
	defer srv.Close()
	errOut, code := runAgainstHungAPI(t, srv, "hello\n", "chat", "--store", t.TempDir(), "--timeout", "1s", "--retries", "0")
	if code != exitAPI || !strings.Contains(errOut, "memtool chat: timed out: no answer from the Claude API within --timeout") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
