package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A signal that comes before exec has taken signals itself (while main
// starts it) still ends it: exec sees that main's context ended by a
// signal, and exits with that signal's status instead of serving stdin
// until it closes.
func TestExecSignalBeforeItListens(t *testing.T) {
	t.Parallel()
	ctx, signalled := signalContext()
	signalled(syscall.SIGTERM)
	stdin, w := io.Pipe() // never closed: exec would wait on it for good
	defer w.Close()
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: stdin, stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- runWithEnv(ctx, []string{"exec", "--store", filepath.Join(t.TempDir(), "m")}, env) }()
	// The deadline only ends a hang; it asserts nothing about speed.
	select {
	case code := <-done:
		if code != 128+int(syscall.SIGTERM) || out.Len() != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want %d and no answer", code, out.String(), errb.String(), 128+int(syscall.SIGTERM))
		}
	case <-time.After(time.Minute):
		t.Fatal("exec went on serving after a signal that came before it listened")
	}
}

// signalOf names the signal that ended a signalContext, and nothing for
// another context.
func TestSignalOf(t *testing.T) {
	ctx, signalled := signalContext()
	if s := signalOf(ctx); s != nil {
		t.Errorf("before a signal: %v", s)
	}
	signalled(syscall.SIGINT)
	if s := signalOf(ctx); s != syscall.SIGINT {
		t.Errorf("after SIGINT: %v", s)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if s := signalOf(cancelled); s != nil {
		t.Errorf("a context cancelled otherwise: %v", s)
	}
}
