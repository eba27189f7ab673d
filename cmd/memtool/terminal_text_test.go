package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	versions "github.com/memtool/memtool/history"
)

// View and a history diff, like search (TestSearchTerminalControls), show
// a memory's control and bidi formatting characters escaped when stdout is
// a terminal: the model wrote that text, and an escape sequence in it
// could otherwise drive the operator's terminal or hide what a line says.
// Piped, they print it as stored.
func TestViewAndDiffTerminalControls(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	hostile := "tea \x1b]52;c;aGk=\x07\x1b[31mred\rok\u009b2J\u202eend\tx"
	runThrough(t, dir, func(s memtool.Store) memtool.Store { return versions.New(s, nil) },
		`{"command":"create","path":"/memories/a.md","file_text":"plain\n"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"plain","new_str":"`+jsonEscape(hostile)+`"}`,
	)
	escaped := `tea \x1b]52;c;aGk=\x07\x1b[31mred\rok\u009b2J\u202eend` + "\tx"
	for _, args := range [][]string{
		{"view", "--store", dir, "/memories/a.md"},
		{"diff", "--store", dir, "--from", "1", "/memories/a.md"},
	} {
		piped := ""
		for _, term := range []bool{false, true} {
			var out, errb bytes.Buffer
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, stdoutTerminal: term}
			if code := runWithEnv(context.Background(), args, env); code != exitOK {
				t.Fatalf("%v: exit %d, stderr %q", args, code, errb.String())
			}
			got := out.String()
			switch {
			case !term && !strings.Contains(got, hostile):
				t.Errorf("%v piped: %q, want the text as stored, %q", args, got, hostile)
			case term && !strings.Contains(got, escaped):
				t.Errorf("%v on a terminal: %q, want %q", args, got, escaped)
			case term && strings.ContainsAny(got, "\x1b\x07\r\u009b\u202e"):
				t.Errorf("%v on a terminal wrote a control character: %q", args, got)
			case term && strings.Count(got, "\n") != strings.Count(piped, "\n"):
				t.Errorf("%v on a terminal: %q, not in the lines of %q", args, got, piped)
			}
			piped = got
		}
	}
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
