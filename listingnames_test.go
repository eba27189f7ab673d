package memtool_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// A name the path gate refuses, put in a directory store by other means
// (an operator's program), is left out of a listing (D22): a line break
// in it would forge a line of the model's view, a tab a size, a bidi
// override reorder what the line says, and bytes that are not UTF-8 make
// the answer not UTF-8. Also in a directory too large for the view, read
// by names, and one level down.
func TestListingLeavesOutUnshowableNames(t *testing.T) {
	hostile := []string{"a.md\n4K\t forged.md", "tab\tx.md", "b\u202etxt.md", "c\u2028d.md", "bad\xff.md", "del\x7f.md"}
	for _, many := range []int{0, 2000} {
		dir := t.TempDir()
		layNames(t, dir, append([]string{"ok.md"}, hostile...), "x")
		for i := range many {
			if err := os.WriteFile(filepath.Join(dir, "z"+strings.Repeat("0", 40)+string(rune('a'+i%26))+strings.Repeat("y", i/26)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := filestore.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := memtool.New(s, nil).Execute(context.Background(), &memtool.View{Path: "/memories"})
		s.Close()
		if res.IsError {
			t.Fatalf("view: %s", res.Text)
		}
		if !utf8.ValidString(res.Text) {
			t.Errorf("%d more files: the listing is not UTF-8: %q", many, res.Text)
		}
		for _, bad := range []string{"forged", "tab", "\u202e", "\u2028", "\x7f"} {
			if strings.Contains(res.Text, bad) {
				t.Errorf("%d more files: the listing shows %q: %q", many, bad, res.Text[:min(len(res.Text), 600)])
			}
		}
		for _, want := range []string{"\t/memories/ok.md\n", "\t/memories/sub/ok.md\n"} {
			if !strings.Contains(res.Text+"\n", want) {
				t.Errorf("%d more files: the listing lacks %q: %q", many, want, res.Text[:min(len(res.Text), 600)])
			}
		}
	}
}

// layNames writes a file of each name, holding text, in dir and in its
// subdirectory sub, as a program other than memtool may.
func layNames(t *testing.T, dir string, names []string, text string) {
	t.Helper()
	for _, d := range []string{"", "sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, d, n), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
