package memtool_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// File views and listings over MaxViewChars keep whole items while they fit
// in MaxViewChars less the header and 300 characters for the note (D8): an
// item that fits exactly is kept, one character more and it is not.
func TestViewCutBoundary(t *testing.T) {
	const header = "Here's the content of /memories/f.md with line numbers:\n"
	// Numbered line 1 is 7+93 characters, every later one 1+7+93.
	line := strings.Repeat("x", 93)
	text := strings.TrimSuffix(strings.Repeat(line+"\n", 20), "\n")
	for _, tc := range []struct{ budget, want int }{{504, 5}, {503, 4}, {100, 1}} {
		limit := utf8.RuneCountInString(header) + 300 + tc.budget
		mem := memtool.New(memstore.New(), &memtool.Options{MaxViewChars: limit})
		if r := do(mem, "command", "create", "path", "/memories/f.md", "file_text", text); r.IsError {
			t.Fatal(r.Text)
		}
		r := do(mem, "command", "view", "path", "/memories/f.md")
		note := fmt.Sprintf("showing lines 1 to %d of 20.", tc.want)
		if r.IsError || !strings.Contains(r.Text, note) || strings.Count(r.Text, line) != tc.want {
			t.Errorf("budget %d: view = %q, want %d lines and %q", tc.budget, r.Text, tc.want, note)
		}
	}

	const listHeader = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"
	// Each entry is a newline and "1B\t/memories/NN" + 82 x's + ".md": 1+100 characters.
	mem0 := memstore.New()
	setup := memtool.New(mem0, nil)
	for i := range 20 {
		p := fmt.Sprintf("/memories/%02d%s.md", i, strings.Repeat("x", 82))
		if r := do(setup, "command", "create", "path", p, "file_text", "t"); r.IsError {
			t.Fatal(r.Text)
		}
	}
	for _, tc := range []struct{ budget, want int }{{505, 5}, {504, 4}} {
		limit := utf8.RuneCountInString(listHeader) + 300 + tc.budget
		mem := memtool.New(mem0, &memtool.Options{MaxViewChars: limit})
		r := do(mem, "command", "view", "path", "/memories")
		note := fmt.Sprintf("showing the first %d entries, in the order above; /memories itself holds 20 names, its subdirectories not counted.", tc.want)
		if r.IsError || !strings.Contains(r.Text, note) || strings.Count(r.Text, "\n1B\t") != tc.want {
			t.Errorf("budget %d: view = %q, want %d entries and %q", tc.budget, r.Text, tc.want, note)
		}
	}
}
