package memtool_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// TestEditKeepsFileUTF8 checks that an edit whose text, given through
// Execute (as the command-line tool gives its arguments), is not UTF-8 is
// refused rather than tear a character of the file or store bytes that
// no later edit may touch (D3): an old_str of one byte of a two-byte
// character, and new_str or insert_text with a stray byte.
func TestEditKeepsFileUTF8(t *testing.T) {
	ctx := context.Background()
	const text = "café\nthé\n"
	for _, cmd := range []memtool.Command{
		&memtool.StrReplace{Path: "/memories/a.md", OldStr: "caf\xc3", NewStr: "cafe"},
		&memtool.StrReplace{Path: "/memories/a.md", OldStr: "\xa9\nth", NewStr: "\nth"},
		&memtool.StrReplace{Path: "/memories/a.md", OldStr: "café", NewStr: "caf\xe9"},
		&memtool.Insert{Path: "/memories/a.md", InsertLine: 1, InsertText: "na\xefve"},
	} {
		s := memstore.New()
		m := memtool.New(s, nil)
		if r := m.Execute(ctx, &memtool.Create{Path: "/memories/a.md", FileText: text}); r.IsError {
			t.Fatal(r.Text)
		}
		r := m.Execute(ctx, cmd)
		data, err := s.ReadFile(ctx, "a.md", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !r.IsError || string(data) != text || !strings.Contains(r.Text, "UTF-8") {
			t.Errorf("%+v: answered %q, file now %q (valid UTF-8: %v); want it refused and the file unchanged", cmd, r.Text, data, utf8.Valid(data))
		}
	}
}

// TestNotUniqueTextIsUTF8 checks that an old_str given through Execute
// that is a piece of a character (one byte of "é") and occurs in several
// places is echoed in the refusal with that piece shown as U+FFFD, as the
// not-found refusal does, not as its raw bytes: the answer is always
// valid UTF-8 text, and the file is unchanged.
func TestNotUniqueTextIsUTF8(t *testing.T) {
	ctx := context.Background()
	const text = "é\né\n"
	for _, oldStr := range []string{"\xc3", "\xa9\n"} {
		s := memstore.New()
		m := memtool.New(s, nil)
		if r := m.Execute(ctx, &memtool.Create{Path: "/memories/a.md", FileText: text}); r.IsError {
			t.Fatal(r.Text)
		}
		r := m.Execute(ctx, &memtool.StrReplace{Path: "/memories/a.md", OldStr: oldStr, NewStr: "x"})
		data, err := s.ReadFile(ctx, "a.md", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !r.IsError || !utf8.ValidString(r.Text) || !strings.Contains(r.Text, "\uFFFD") || string(data) != text {
			t.Errorf("old_str %q: answered %q (valid UTF-8: %v), file now %q; want a refusal in valid UTF-8 and the file unchanged", oldStr, r.Text, utf8.ValidString(r.Text), data)
		}
	}
}
