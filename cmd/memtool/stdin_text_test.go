package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Text that is not UTF-8, from stdin or a flag, is refused by the edits
// of the command line (insert, str_replace's --new) and changes nothing:
// the model's own edits cannot carry such bytes (its JSON decodes them as
// U+FFFD), and a file they made invalid could never be edited by the
// model again (an edit refuses a file that is not UTF-8). CRLF and a
// missing final newline are kept as the model's insert keeps them.
func TestEditTextMustBeUTF8(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	mustRunCLI(t, nil, "", "create", "--store", dir, "--text", "one\ntwo", "/memories/a.md")
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"caf\xe9\n", []string{"insert", "--store", dir, "/memories/a.md", "1"}},
		{"", []string{"insert", "--store", dir, "--text", "caf\xe9", "/memories/a.md", "1"}},
		{"", []string{"str_replace", "--store", dir, "--old", "two", "--new", "caf\xe9", "/memories/a.md"}},
	} {
		_, stderr, code := runCLI(t, nil, c.stdin, c.args...)
		if code != exitUsage || !strings.Contains(stderr, "not valid UTF-8") || !strings.Contains(stderr, "nothing was changed") {
			t.Errorf("memtool %q: exit %d, %q; want exit %d and that the text is not UTF-8", c.args, code, stderr, exitUsage)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(b) != "one\ntwo" {
			t.Fatalf("after memtool %q the file holds %q (%v)", c.args, b, err)
		}
	}

	// The text the model's insert would get, byte for byte, from stdin.
	mustRunCLI(t, nil, "x\r\ny\r\n", "insert", "--store", dir, "/memories/a.md", "1")
	mustRunCLI(t, nil, "z", "insert", "--store", dir, "/memories/a.md", "0")
	out := execMemtool(t, jsonLine(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "two", "new_str": "2"}), "--store", dir)
	if a := decodeLines(t, out); len(a) != 1 || a[0][0].IsError {
		t.Fatalf("the model's edit after the command line's: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(b) != "z\none\nx\r\ny\r\n2" {
		t.Errorf("the file holds %q (%v), want %q", b, err, "z\none\nx\r\ny\r\n2")
	}
}
