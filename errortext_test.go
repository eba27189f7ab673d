package memtool_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// Error texts are cut at MaxViewChars characters like views (D8); the
// reference battery and the transcripts check that texts under the cap
// stay as they were.

// newMemWith returns a Memory on a memstore holding the file a.md.
func newMemWith(t *testing.T, opts *memtool.Options, content string) *memtool.Memory {
	t.Helper()
	s := memstore.New()
	if err := s.WriteFile(context.Background(), "a.md", []byte(content), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	return memtool.New(s, opts)
}

func strReplace(mem *memtool.Memory, oldStr string) memtool.Result {
	return mem.Execute(context.Background(), &memtool.StrReplace{Path: "/memories/a.md", OldStr: oldStr, NewStr: "z"})
}

// checkCap checks that r is a failure of at most limit characters that
// uses most of them.
func checkCap(t *testing.T, r memtool.Result, limit int) {
	t.Helper()
	n := utf8.RuneCountInString(r.Text)
	if !r.IsError || n > limit || n < limit-200 {
		t.Errorf("a failure of %d characters (cap %d): %.300q…", n, limit, r.Text)
	}
}

// shownRun returns the length in characters of the run of r at the start
// of s.
func shownRun(s string, r rune) int {
	n := 0
	for _, c := range s {
		if c != r {
			break
		}
		n++
	}
	return n
}

func TestNotFoundTextIsCapped(t *testing.T) {
	mem := newMemWith(t, nil, "hello")
	head := "Error: No replacement was performed, old_str `"
	for _, tc := range []struct {
		r rune
		n int
	}{{'x', 7 << 20}, {'é', 100000}} {
		old := strings.Repeat(string(tc.r), tc.n)
		r := strReplace(mem, old)
		checkCap(t, r, memtool.DefaultMaxViewChars)
		k := shownRun(strings.TrimPrefix(r.Text, head), tc.r)
		want := head + old[:k*len(string(tc.r))] + fmt.Sprintf("…` did not appear verbatim in /memories/a.md. [old_str cut: only its first %s of %s characters are shown.]", commas(k), commas(tc.n))
		if r.Text != want {
			t.Errorf("%d × %q: %.200q … %q", tc.n, tc.r, r.Text, r.Text[max(0, len(r.Text)-200):])
		}
	}
}

// TestNotFoundTextAtTheCap: a text of exactly the cap is whole, one
// character more is cut.
func TestNotFoundTextAtTheCap(t *testing.T) {
	mem := newMemWith(t, nil, "hello")
	fixed := len("Error: No replacement was performed, old_str `` did not appear verbatim in /memories/a.md.")
	old := strings.Repeat("q", memtool.DefaultMaxViewChars-fixed)
	want := "Error: No replacement was performed, old_str `" + old + "` did not appear verbatim in /memories/a.md."
	if r := strReplace(mem, old); r.Text != want {
		t.Errorf("at the cap: %d characters, %q…", len(r.Text), r.Text[len(r.Text)-120:])
	}
	r := strReplace(mem, old+"q")
	checkCap(t, r, memtool.DefaultMaxViewChars)
	if !strings.HasSuffix(r.Text, "characters are shown.]") {
		t.Errorf("one over the cap: …%q", r.Text[len(r.Text)-120:])
	}
}

func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

var linesText = regexp.MustCompile(`^Error: No replacement was performed\. Multiple occurrences of old_str ` + "`" + `(.*?)` + "`" + ` in lines: ([0-9, ]*?)(?: … and ([0-9,]+) more lines?)?\. Please ensure it is unique(?: \[old_str cut: only its first ([0-9,]+) of ([0-9,]+) characters are shown\.\])?$`)

// checkLines checks a "Multiple occurrences" text: its list holds the first
// lines, 1, 2, 3…, then says how many more there are, total in all.
func checkLines(t *testing.T, text string, total int) (oldShown string, lines int) {
	t.Helper()
	m := linesText.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("not a Multiple occurrences text: %.200q … %q", text, text[max(0, len(text)-200):])
	}
	shown := strings.Split(m[2], ", ")
	for i, s := range shown {
		if s != strconv.Itoa(i+1) {
			t.Fatalf("line %d of the list is %q", i, s)
		}
	}
	more := 0
	if m[3] != "" {
		more, _ = strconv.Atoi(strings.ReplaceAll(m[3], ",", ""))
	}
	if len(shown)+more != total {
		t.Errorf("%d lines shown and %d more, want %d in all", len(shown), more, total)
	}
	return m[1], len(shown)
}

func TestMultipleOccurrencesTextIsCapped(t *testing.T) {
	const total = 200000
	mem := newMemWith(t, nil, strings.Repeat("x\n", total))
	r := strReplace(mem, "x")
	checkCap(t, r, memtool.DefaultMaxViewChars)
	if old, shown := checkLines(t, r.Text, total); old != "x" || shown < 1000 {
		t.Errorf("old_str %q, %d lines shown", old, shown)
	}

	// A long old_str with a short list: old_str is cut, the list is whole.
	long := strings.Repeat("y", 100000)
	mem = newMemWith(t, nil, long+"\n"+long)
	r = strReplace(mem, long)
	checkCap(t, r, memtool.DefaultMaxViewChars)
	if old, shown := checkLines(t, r.Text, 2); shown != 2 || !strings.HasSuffix(old, "…") || len(old) < 15000 {
		t.Errorf("%d characters of old_str, %d lines shown", len(old), shown)
	}

	// Both long: they share the room.
	const limit = 2000
	long = strings.Repeat("w", 1500)
	mem = newMemWith(t, &memtool.Options{MaxViewChars: limit}, strings.Repeat(long+"\n", 400))
	r = strReplace(mem, long)
	checkCap(t, r, limit)
	old, shown := checkLines(t, r.Text, 400)
	if len(old) < 600 || shown < 100 {
		t.Errorf("%d characters of old_str, %d lines shown", len(old), shown)
	}
}

// TestOtherErrorTextsAreCapped: a text that echoes the input and has no
// cut of its own is cut at its end.
func TestOtherErrorTextsAreCapped(t *testing.T) {
	mem := memtool.New(memstore.New(), nil)
	key := strings.Repeat("k", 100000)
	r := mem.Run(context.Background(), []byte(`{"`+key+`":1,"`+key+`":2}`))
	checkCap(t, r, memtool.DefaultMaxViewChars)
	if !strings.HasPrefix(r.Text, "Error: Duplicate parameter 'kkk") || !strings.HasSuffix(r.Text, "… [Error text cut at 16,000 characters: it is 100,043 characters long.]") {
		t.Errorf("%.100q … %q", r.Text, r.Text[len(r.Text)-100:])
	}
}

// An old_str with escaped lone surrogates matches no text, not the file's
// U+FFFD, and its echo shows each surrogate, and each byte that is not
// UTF-8 (sent through the Go API), as one U+FFFD: the answer is UTF-8.
func TestLoneSurrogateOldStr(t *testing.T) {
	mem := newMemWith(t, nil, "a\uFFFDb")
	for _, tc := range []struct{ input, want string }{
		{`{"command":"str_replace","path":"/memories/a.md","old_str":"\udfff\ud800","new_str":"x"}`, "\uFFFD\uFFFD"},
		{`{"command":"str_replace","path":"/memories/a.md","old_str":"a\udc00b","new_str":"x"}`, "a\uFFFDb"},
	} {
		r := mem.Run(t.Context(), []byte(tc.input))
		want := "Error: No replacement was performed, old_str `" + tc.want + "` did not appear verbatim in /memories/a.md."
		if r.Text != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.input, r.Text, want)
		}
	}
	r := mem.Execute(t.Context(), &memtool.StrReplace{Path: "/memories/a.md", OldStr: "\xff\xfe\xed\xa0\x80"})
	if want := "Error: No replacement was performed, old_str `\uFFFD\uFFFD\uFFFD` did not appear verbatim in /memories/a.md."; r.Text != want {
		t.Errorf("invalid bytes through the Go API:\n got %q\nwant %q", r.Text, want)
	}
}
