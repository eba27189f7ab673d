package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A supervisor's SIGTERM (or Ctrl-C) ends `memtool exec` even while it waits
// for input, after every answer so far has been written.
func TestExecStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(memtoolBinary(t), "exec", "--store", t.TempDir())
			cmd.Env = childEnv()
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// One command answered proves the process is up and serving.
			if _, err := stdin.Write([]byte(`{"command":"create","path":"/memories/a.txt","file_text":"x"}` + "\n")); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || !strings.Contains(line, "File created successfully") {
				t.Fatalf("first answer = %q, %v", line, err)
			}
			// stdin stays open: only the signal can end the process.
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit after %v: %v\n%s", sig, err, stderr.String())
				}
			case <-time.After(time.Minute): // a hang guard, not a timing assertion
				t.Fatalf("memtool exec still running a minute after %v", sig)
			}
			checkNoRace(t, stderr.String())
		})
	}
}
