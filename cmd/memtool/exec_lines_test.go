package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// execPlain runs `memtool exec --store mem:` (the binary without the race
// detector) on input and returns its stdout; it fails t unless memtool
// exits 0.
func execPlain(t *testing.T, input string) string {
	t.Helper()
	cmd := exec.Command(plainBinary(t), "exec", "--store", "mem:")
	cmd.Env = childEnv()
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memtool exec: %v\nstderr:\n%s", err, stderr.String())
	}
	return stdout.String()
}

// paddedTurn is a turn of one view of /memories, padded with spaces to n
// bytes.
func paddedTurn(n int) string {
	call := `[{"command":"view","path":"/memories"}`
	return call + strings.Repeat(" ", n-len(call)-1) + "]"
}

// A line of maxExecLine bytes is read and run; one byte more is refused as
// too long and nothing of it runs, whether the line ends with a newline or
// with the input.
func TestExecLineLimitExact(t *testing.T) {
	t.Parallel()
	tooLong := fmt.Sprintf("Error: Input line is too long: more than %d bytes", maxExecLine)
	for _, tc := range []struct {
		name string
		n    int    // the line's length, without its end
		end  string // how the line ends
		long bool   // whether it must be refused as too long
	}{
		{"at the limit, newline", maxExecLine, "\n", false},
		{"over the limit, newline", maxExecLine + 1, "\n", true},
		{"at the limit, end of input", maxExecLine, "", false},
		{"over the limit, end of input", maxExecLine + 1, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := execPlain(t, paddedTurn(tc.n)+tc.end)
			lines := decodeLines(t, out)
			if len(lines) != 1 || len(lines[0]) != 1 {
				t.Fatalf("%d answer lines to one input line: %.300q", len(lines), out)
			}
			got := lines[0][0].Text()
			if !tc.long && !strings.HasPrefix(got, "Here're the files") {
				t.Errorf("a line of %d bytes ending %q: answer %.200q, want the view", tc.n, tc.end, got)
			}
			if (got == tooLong) != tc.long {
				t.Errorf("a line of %d bytes ending %q: answer %.200q; refused as too long: %v, want %v", tc.n, tc.end, got, got == tooLong, tc.long)
			}
		})
	}
}
