package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A closed stdout (memtool exec < in | head -1) ends memtool with exit
// status 4, not with SIGPIPE; so does it for a one-command verb.
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"exec", "--store", dir}, {"view", "--store", dir, "/memories"}} {
		t.Run(args[0], func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer w.Close()
			cmd := exec.Command(memtoolBinary(t), args...)
			cmd.Env = childEnv()
			cmd.Stdin = strings.NewReader(strings.Repeat(`{"command":"view","path":"/memories"}`+"\n", 100))
			cmd.Stdout = w
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err = cmd.Run()
			checkNoRace(t, stderr.String())
			if cmd.ProcessState == nil {
				t.Fatal(err)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitBrokenIO {
				t.Errorf("memtool %s with a closed stdout: %v, want exit status %d\nstderr:\n%s", args[0], cmd.ProcessState, exitBrokenIO, stderr.String())
			}
		})
	}
}
