//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C ends a command that waits for its text on stdin (a terminal, or
// a pipe whose writer lives on), with exit status 130, and nothing is
// written: the text read so far may be cut short. main takes SIGINT, so
// a read of stdin that does not give way to it would wait on for good.
func TestSignalWhileReadingStdin(t *testing.T) {
	t.Parallel()
	bin := plainBinary(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"create", []string{"create", "--store", "STORE", "/memories/cut.md"}},
		{"insert", []string{"insert", "--store", "STORE", "/memories/cut.md", "0"}},
		{"run", []string{"run", "--store", "STORE", "-"}},
		{"log", []string{"log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := filepath.Join(t.TempDir(), "memories")
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			// The test keeps the read end open too, to see what is unread.
			defer inR.Close()
			defer inW.Close()
			args := slices.Clone(tc.args)
			if i := slices.Index(args, "STORE"); i >= 0 {
				args[i] = store
			}
			bin := bin
			if tc.name == "run" {
				bin = claudeBinary(t)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = childEnv("ANTHROPIC_API_KEY=sk-test-unused")
			var stderr bytes.Buffer
			cmd.Stdin, cmd.Stderr = inR, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				cmd.Process.Kill()
				<-done
			}()
			if _, err := inW.WriteString("the first half of the te"); err != nil {
				t.Fatal(err)
			}
			// Once memtool has read what was written, it waits in the read
			// of stdin, with its signal handler in place.
			deadline := time.Now().Add(hangGuard)
			for unread(t, inR) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("memtool did not read stdin\nstderr:\n%s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(hangGuard):
				t.Fatalf("memtool %s still waits for stdin %v after SIGINT\nstderr:\n%s", tc.name, hangGuard, stderr.String())
			}
			done <- nil // for the deferred wait
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("memtool %s after SIGINT: exit %d, stderr %q; want %d, interrupted", tc.name, code, stderr.String(), exitInterrupted)
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Errorf("memtool %s after SIGINT left a store behind (%v): the cut text may have been written", tc.name, err)
			}
		})
	}
}
