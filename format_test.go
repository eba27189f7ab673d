package memtool

import (
	"slices"
	"sort"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestFormatSize(t *testing.T) {
	const (
		KiB = 1 << 10
		MiB = 1 << 20
		GiB = 1 << 30
		TiB = 1 << 40
	)
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0B"},
		{1, "1B"},
		{1023, "1023B"},
		{KiB, "1K"},
		{1126, "1.1K"},            // 1.0996 rounds to 1.1
		{1075, "1.0K"},            // 1.0498 rounds down, and keeps its decimal
		{1280, "1.3K"},            // 1.25: half up, as JavaScript's toFixed(1)
		{1536, "1.5K"},            // 1.5
		{1100 * KiB, "1.1M"},      // 1.0742 rounds to 1.1
		{MiB - 1, "1024.0K"},      // not yet a mebibyte
		{MiB, "1M"},               // whole
		{MiB + MiB/2, "1.5M"},     //
		{GiB + GiB/4, "1.3G"},     // 1.25 GiB, half up
		{TiB, "1T"},               //
		{1024 * TiB, "1024T"},     // T is the largest unit
		{TiB + TiB/10, "1.1T"},    // 1.0999…
		{3*GiB + 3*GiB/4, "3.8G"}, // 3.75, half up
	} {
		if got := formatSize(tc.n); got != tc.want {
			t.Errorf("formatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestLessUTF16(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"a", "b", true},
		{"b", "a", false},
		{"a", "a", false},
		{"", "a", true},
		{"a", "", false},
		{"a", "ab", true},
		{"B", "a", true},               // upper case first, as in byte order
		{"10", "9", true},              // no numeric collation
		{"\U0001F600", "\uFF5E", true}, // astral (D83D DE00) before U+FF5E, unlike byte order
		{"\uFF5E", "\U0001F600", false},
		{"\U0001F600", "\uE000", true}, // astral before the private use area
		{"\uD7FF", "\U0001F600", true}, // below the surrogates: before astral
		{"\U00010000", "\U0001F600", true},
		{"x\U0001F600y", "x\uFFFDy", true},
		{"\u00e9", "z", false},
	} {
		if got := lessUTF16(tc.a, tc.b); got != tc.want {
			t.Errorf("lessUTF16(%+q, %+q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// lessUTF16 agrees with comparing the UTF-16 encodings, for valid names.
func TestLessUTF16MatchesEncoding(t *testing.T) {
	names := []string{"", "a", "A", "ab", "a b", "_u", "10", "9", "é", "日本", "～", "\uFFFD", "\uE000", "\uD7FF",
		"😀", "😀a", "\U00010000", "\U0010FFFF", "\u0800", "\u07FF", "ü", "ü\U0001F600", "üz"}
	for _, a := range names {
		for _, b := range names {
			want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))) < 0
			if got := lessUTF16(a, b); got != want {
				t.Errorf("lessUTF16(%+q, %+q) = %v; comparing UTF-16 gives %v", a, b, got, want)
			}
		}
	}
	sorted := slices.Clone(names)
	sort.Slice(sorted, func(i, j int) bool { return lessUTF16(sorted[i], sorted[j]) })
	if i := slices.Index(sorted, "😀"); i > slices.Index(sorted, "～") {
		t.Errorf("sorted: %+q; 😀 must come before ～", sorted)
	}
}

func TestDecodeLossy(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		// Valid text is kept as it is.
		{"valid", "héllo ✓ 🎉", "héllo ✓ 🎉"},
		{"empty", "", ""},
		{"last valid before surrogates", "\xed\x9f\xbf", "\ud7ff"},
		// A sequence cut short is one U+FFFD, whatever its length.
		{"truncated three-byte sequence", "\xe2\x82", "\ufffd"},
		{"truncated then text", "\xe2\x82a", "\ufffda"},
		{"truncated four-byte sequence", "\xf0\x9f\x98", "\ufffd"},
		// A byte that starts no sequence is one U+FFFD by itself.
		{"two invalid bytes", "ok \xff\xfe end", "ok \ufffd\ufffd end"},
		{"lone continuation", "a\x80b", "a\ufffdb"},
		{"overlong slash", "\xc0\xaf", "\ufffd\ufffd"},
		// A lead byte whose next byte is out of its range (a surrogate, an
		// overlong form, above U+10FFFF) is one, and so is each byte after.
		{"surrogate", "\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"overlong three-byte", "\xe0\x80\xaf", "\ufffd\ufffd\ufffd"},
		{"above U+10FFFF", "\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		// The Unicode Standard's example of substituting maximal subparts
		// (chapter 3, "U+FFFD Substitution of Maximal Subparts").
		{"standard example", "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64", "a\ufffd\ufffd\ufffdb\ufffdc\ufffd\ufffdd"},
	} {
		got := decodeLossy([]byte(tc.in))
		if got != tc.want {
			t.Errorf("%s: decodeLossy(%q) = %+q, want %+q", tc.name, tc.in, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: decodeLossy(%q) = %q is not valid UTF-8", tc.name, tc.in, got)
		}
	}
}

func TestOccurrenceLines(t *testing.T) {
	for _, tc := range []struct {
		text, sub, want string
	}{
		{"foo\nbar\nfoo\nbaz foo", "foo", "1, 3, 4"},
		{"foo foo\nfoo", "foo", "1, 2"},                 // two on one line: the line once
		{"a\nb\na\nb", "a\nb", "1, 3"},                  // multi-line old_str
		{"x\ny x\ny", "x\ny", "1, 2"},                   // the second starts where the first ends
		{"aaa", "aa", "1"},                              // non-overlapping
		{"aaaa\n\naa", "aa", "1, 3"},                    // two on line 1, one on line 3
		{"\n\nz\n\nz", "z", "3, 5"},                     // leading empty lines
		{"ab\r\nab\r\n", "ab\r\n", "1, 2"},              // CRLF kept as it is
		{"no match here", "zzz", ""},                    //
		{"日本\n日本語", "日本", "1, 2"},                       // multi-byte
		{"line\nline\nline\nline", "\nline", "1, 2, 3"}, // starts at the end of a line
	} {
		if got := occurrenceLines(tc.text, tc.sub); got != tc.want {
			t.Errorf("occurrenceLines(%q, %q) = %q, want %q", tc.text, tc.sub, got, tc.want)
		}
	}
}
