//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// addressSpaceLimit is the RLIMIT_AS, in KiB, under which the tests below
// run memtool: a line that made memtool take more would kill it with
// "fatal error: out of memory" and leave the lines after it unanswered.
const addressSpaceLimit = 4000000

// execLimited runs `memtool exec --store dir` (the binary bin) under
// addressSpaceLimit with the input that write produces, and returns its
// stdout and its peak RSS in bytes. It fails t unless memtool exits 0.
func execLimited(t *testing.T, bin, dir string, write func(io.Writer) error) (stdout string, maxRSS int64) {
	t.Helper()
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" exec --store "$1"`, addressSpaceLimit)
	cmd := exec.Command("sh", "-c", script, bin, dir)
	cmd.Env = childEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	writeErr := write(in)
	in.Close()
	err = cmd.Wait()
	checkNoRace(t, stderr.String())
	if err != nil || writeErr != nil {
		t.Fatalf("memtool exec under ulimit -v %d: %v (writing its input: %v)\nstderr:\n%.4000s", addressSpaceLimit, err, writeErr, stderr.String())
	}
	return out.String(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// viewTurn is one exec line: a turn of n views of path.
func viewTurn(n int, path string) string {
	calls := make([]map[string]any, n)
	for i := range calls {
		calls[i] = map[string]any{"command": "view", "path": path}
	}
	return jsonLine(calls)
}

// One exec line cannot take the process down: a turn of 20,000 views of a
// 1 MiB file (which once started 20,000 goroutines and built a 322 MB
// answer), a turn of millions of tiny calls, and a 200 MB line are each
// answered with an error, under a 4 GB address-space limit, and the lines
// after them are answered as usual. A turn of exactly maxTurnCalls runs.
func TestExecBoundsOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := strings.Repeat(strings.Repeat("x", 1023)+"\n", 1024) // 1 MiB, 1,024 lines
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small"), 0o600); err != nil {
		t.Fatal(err)
	}
	after := jsonLine(map[string]any{"command": "view", "path": "/memories/big.txt", "view_range": []int{1, 1}})
	tiny := `[` + strings.Repeat(`{},`, maxExecLine/3-2) + `{}]` + "\n" // just under maxExecLine
	out, rss := execLimited(t, memtoolBinary(t), dir, func(w io.Writer) error {
		for _, line := range []string{viewTurn(20000, "/memories/big.txt"), after, tiny, after} {
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
		}
		// 200 MB in one line, written in pieces so that this test does
		// not hold it either.
		if _, err := io.WriteString(w, `{"command":"create","path":"/memories/huge.txt","file_text":"`); err != nil {
			return err
		}
		chunk := strings.Repeat("y", 1<<20)
		for range 200 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return err
			}
		}
		for _, line := range []string{"\"}\n", after, viewTurn(maxTurnCalls, "/memories/small.txt"), after} {
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
		}
		return nil
	})

	lines := decodeLines(t, out)
	if len(lines) != 8 {
		t.Fatalf("%d answer lines, want 8", len(lines))
	}
	tooMany := fmt.Sprintf("Error: Too many tool calls in one line: more than %d; none of them was run. Send at most %d calls per line", maxTurnCalls, maxTurnCalls)
	tooLong := fmt.Sprintf("Error: Input line is too long: more than %d bytes", maxExecLine)
	firstLine := "Here's the content of /memories/big.txt with line numbers:\n     1\t" + strings.Repeat("x", 1023)
	for i, want := range map[int]string{0: tooMany, 1: firstLine, 2: tooMany, 3: firstLine, 4: tooLong, 5: firstLine, 7: firstLine} {
		if len(lines[i]) != 1 || lines[i][0].Text() != want {
			t.Errorf("answer line %d = %.300v, want one answer %.300q", i, lines[i], want)
		}
	}
	if got := lines[6]; len(got) != maxTurnCalls {
		t.Errorf("a turn of %d views got %d answers", maxTurnCalls, len(got))
	} else {
		for i, a := range got {
			if a.Text() != "Here's the content of /memories/small.txt with line numbers:\n     1\tsmall" {
				t.Fatalf("answer %d of the full turn: %.300s", i, a.Content)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "huge.txt")); err == nil {
		t.Errorf("the refused 200 MB line created its file")
	}
	// The longest line is held once while it is read, with room to grow,
	// and never decoded whole: a few hundred MiB at the peak, which the
	// race detector's shadow memory about triples.
	limit := int64(512 << 20)
	if raceEnabled() {
		limit *= 3
	}
	if rss > limit {
		t.Errorf("peak RSS %d MiB, more than %d MiB", rss>>20, limit>>20)
	}
	t.Logf("peak RSS %d MiB", rss>>20)
}

// The answers kept in one line stay within maxAnswerBytes: a turn of six
// views of a 5 MB image keeps whole answers, in input order, while they
// fit, and answers each later call with an error that says its answer was
// left out and that the call itself succeeded. The output stays valid JSON
// and the next line is answered.
func TestExecAnswerCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	webp := make([]byte, 5_000_000)
	copy(webp, "RIFF\x00\x00\x00\x00WEBP")
	if err := os.WriteFile(filepath.Join(dir, "pic.webp"), webp, 0o600); err != nil {
		t.Fatal(err)
	}
	const views = 6 // their answers are more than maxAnswerBytes
	in := viewTurn(views, "/memories/pic.webp") + jsonLine(map[string]any{"command": "view", "path": "/memories"})
	// The binary without the race detector: this test checks the bound on
	// one line's answers, which the detector does not see, and under it
	// the 30 MB of answers took about a minute. The concurrency of one
	// turn stays under the detector in TestRacingInOneLine and
	// TestExecTurnWorkers.
	out, _ := execLimited(t, plainBinary(t), dir, func(w io.Writer) error {
		_, err := io.WriteString(w, in)
		return err
	})
	first, _, _ := strings.Cut(out, "\n")
	if len(first) > maxAnswerBytes+views*1024 {
		t.Errorf("the turn's answer is %d bytes, more than %d and a short error per call", len(first), maxAnswerBytes)
	}
	lines := decodeLines(t, out)
	if len(lines) != 2 || len(lines[0]) != views || len(lines[1]) != 1 {
		t.Fatalf("answers: %d lines", len(lines))
	}
	if lines[1][0].IsError {
		t.Errorf("the line after: %s", lines[1][0].Content)
	}
	kept, sum := 0, 0
	for _, a := range lines[0] {
		if a.IsError {
			break
		}
		var blocks []map[string]any
		if err := json.Unmarshal(a.Content, &blocks); err != nil || len(blocks) != 1 || blocks[0]["type"] != "image" {
			t.Fatalf("answer %d: %.200s, want an image block", kept, a.Content)
		}
		b, _ := json.Marshal(a)
		kept, sum = kept+1, sum+len(b)
	}
	if kept == 0 || kept == views || sum+sum/kept <= maxAnswerBytes {
		t.Fatalf("%d images (%d bytes) kept of %d; want as many as fit in %d bytes", kept, sum, views, maxAnswerBytes)
	}
	for i, a := range lines[0][kept:] {
		want := fmt.Sprintf("(%d bytes) was left out: the answers to one line may hold at most %d bytes. The call itself succeeded.", sum/kept, maxAnswerBytes)
		if !a.IsError || !strings.HasPrefix(a.Text(), "Error: The answer to this call ") || !strings.Contains(a.Text(), want) {
			t.Errorf("answer %d: %.300s, want an error containing %q", kept+i, a.Content, want)
		}
	}
}
