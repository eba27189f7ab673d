package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
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

// Every line that is not blank gets exactly one answer line, in order,
// whatever it holds: a byte-order mark, NUL, invalid UTF-8, CRLF line
// ends, arrays empty, of one, of non-objects and nested; the last line is
// answered without its newline. Answers that quote control characters,
// U+2028 and invalid UTF-8 stay one line of valid JSON.
func TestExecOddLines(t *testing.T) {
	t.Parallel()
	view := `{"command":"view","path":"/memories"}`
	lines := []struct {
		in   string
		want string // the start of the answer's text; "[n" for a turn of n answers
	}{
		{"", ""},
		{"  \t ", ""},
		{"\r", ""},
		{view + "\r", "Here're the files"},
		{"\ufeff" + view, "Error: Tool input is not valid JSON"},
		{"\x00", "Error: Tool input is not valid JSON"},
		{"\xff\xfe", "Error: Tool input is not valid JSON"},
		{`{"command":"create","path":"/memories/odd","file_text":"a\u2028b\u0000c\u001b\r\nd` + "\xff" + `"}`, "File created"},
		{`{"command":"view","path":"/memories/odd"}`, "Here's the content of /memories/odd"},
		{`[]`, "[0"},
		{`[` + view + `]`, "[1"},
		{`[1,"a",null,[]]`, "[4"},
		{`[[` + view + `]]`, "[1"},
		{view + " " + view, "Error: Tool input must be a single JSON object"},
		{view, "Here're the files"}, // the last line, without a newline
	}
	var in strings.Builder
	var want []string
	for i, l := range lines {
		in.WriteString(l.in)
		if i < len(lines)-1 {
			in.WriteString("\n")
		}
		if l.want != "" {
			want = append(want, l.want)
		}
	}
	out := execPlain(t, in.String())
	got, raw := decodeLines(t, out), strings.Split(out, "\n")
	if len(got) != len(want) || strings.Count(out, "\n") != len(want) {
		t.Fatalf("%d answer lines, want %d:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		if n, ok := strings.CutPrefix(w, "["); ok {
			if fmt.Sprint(len(got[i])) != n || !strings.HasPrefix(raw[i], "[") {
				t.Errorf("answer line %d: %s, want a turn of %s answers", i, raw[i], n)
			}
			continue
		}
		if len(got[i]) != 1 || !strings.HasPrefix(got[i][0].Text(), w) {
			t.Errorf("answer line %d: %s, want one answer starting %q", i, raw[i], w)
		}
	}
	if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' || r == '\u2028' || r == '\u2029' }); i >= 0 || !utf8.ValidString(out) {
		t.Errorf("the answers hold a control character, U+2028, U+2029 or invalid UTF-8 raw (at byte %d):\n%q", i, out)
	}
	if want := "a\u2028b\x00c\x1b\r"; !strings.Contains(got[5][0].Text(), want) {
		t.Errorf("the view of odd: %q, want it to hold %q", got[5][0].Text(), want)
	}
}
