package memtool_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// TestCutNotesNamingLongPathsFitTheCap checks that a cut listing and a cut
// str_replace snippet stay within MaxViewChars when their note names a
// long path (D8): the note's room grows with the path it names.
func TestCutNotesNamingLongPathsFitTheCap(t *testing.T) {
	mem := memtool.New(memstore.New(), nil)
	// A directory path of 963 characters, well within the gate's limits.
	dir := "/memories/" + strings.Repeat("d", 250) + "/" + strings.Repeat("e", 250) + "/" + strings.Repeat("f", 250) + "/" + strings.Repeat("g", 200)
	for i := range 40 {
		if r := do(mem, "command", "create", "path", fmt.Sprintf("%s/%02d", dir, i), "file_text", "x"); r.IsError {
			t.Fatal(r.Text)
		}
	}
	r := do(mem, "command", "view", "path", dir)
	if n := utf8.RuneCountInString(r.Text); r.IsError || n > memtool.DefaultMaxViewChars || !strings.Contains(r.Text, "[Listing cut at 16,000 characters") {
		t.Errorf("listing of %d characters (cap %d), error %v, ends %q", n, memtool.DefaultMaxViewChars, r.IsError, r.Text[max(0, len(r.Text)-200):])
	}

	big := dir + "/big.md"
	if r := do(mem, "command", "create", "path", big, "file_text", "a\n"+strings.Repeat("y", 20000)); r.IsError {
		t.Fatal(r.Text)
	}
	r = do(mem, "command", "str_replace", "path", big, "old_str", "a", "new_str", "b")
	if n := utf8.RuneCountInString(r.Text); r.IsError || n > memtool.DefaultMaxViewChars || !strings.Contains(r.Text, "[Snippet cut at 16,000 characters") {
		t.Errorf("snippet of %d characters (cap %d), error %v, ends %q", n, memtool.DefaultMaxViewChars, r.IsError, r.Text[max(0, len(r.Text)-200):])
	}
}
