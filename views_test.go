package memtool

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// oldFileView is the file view as it was before fileView, which split the
// whole text into lines: the oracle fileView must match byte for byte.
func oldFileView(m *Memory, p string, data []byte, vr *[2]int64) string {
	text := decodeLossy(data)
	lines := strings.Split(text, "\n")
	first, shown := 1, lines
	if vr != nil {
		n := int64(len(lines))
		start := max(vr[0], 1) - 1
		end := vr[1]
		if end == -1 || end > n {
			end = n
		}
		if start >= end {
			first, shown = int(min(start, n))+1, nil
		} else {
			first, shown = int(start)+1, lines[start:end]
		}
	}
	header := "Here's the content of " + p + " with line numbers:\n"
	var sb strings.Builder
	sb.WriteString(header)
	numberLines(&sb, shown, first)
	out := sb.String()
	if utf8.RuneCountInString(out) <= m.opts.MaxViewChars || len(shown) == 0 {
		return out // (the old view failed on a header alone over the cap)
	}
	k, left := m.cutView(header, len(shown), func(i int) int {
		n := 7 + utf8.RuneCountInString(shown[i])
		if i > 0 {
			n++
		}
		return n
	})
	sb.Reset()
	sb.WriteString(header)
	total := len(lines)
	limit := formatCount(m.opts.MaxViewChars)
	if k == 0 {
		line := shown[0]
		cut := truncateRunes(line, left-7)
		numberLines(&sb, []string{cut}, first)
		fmt.Fprintf(&sb, "\n\n[Output cut at %s characters: line %d is %s characters long and only its first %s are shown.",
			limit, first, formatCount(utf8.RuneCountInString(line)), formatCount(utf8.RuneCountInString(cut)))
		if len(shown) > 1 {
			fmt.Fprintf(&sb, " Lines %d to %d of %d are not shown; read them with view_range [%d, %s].]", first+1, first+len(shown)-1, total, first+1, rangeEnd(vr))
		} else {
			sb.WriteString("]")
		}
		return sb.String()
	}
	numberLines(&sb, shown[:k], first)
	last := first + k - 1
	fmt.Fprintf(&sb, "\n\n[Output cut at %s characters: showing lines %d to %d of %d. Read the rest with view_range [%d, %s].]",
		limit, first, last, total, last+1, rangeEnd(vr))
	return sb.String()
}

// fileView answers as the whole-text view did, on files of every shape:
// short and long lines, multi-byte and invalid UTF-8 (also cut in the
// middle of a sequence), CRLF, ranges in and past the file, small caps.
func TestFileViewMatchesWholeTextView(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "word ", "é", "😀", "\xff", "\xe2\x82", "\xf0\x9f", "\r", "\n", "\n", "\n", strings.Repeat("x", 300)}
	for iter := range 3000 {
		var sb strings.Builder
		for range rng.IntN(200) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		data := []byte(sb.String())
		maxChars := []int{16000, 1000, 400, 320, 50}[rng.IntN(5)]
		m := New(nil, &Options{MaxViewChars: maxChars})
		var vr *[2]int64
		if rng.IntN(2) == 0 {
			a := int64(rng.IntN(60) - 2)
			b := int64(-1)
			if rng.IntN(2) == 0 {
				b = max(a, 1) + int64(rng.IntN(40))
			}
			vr = &[2]int64{a, b}
		}
		total := strings.Count(string(data), "\n") + 1
		first, n := 1, total
		if vr != nil {
			first, n = viewRange(total, *vr)
		}
		rest := data
		for range first - 1 {
			rest = rest[bytes.IndexByte(rest, '\n')+1:]
		}
		got := m.fileView("/memories/f", rest, total, first, n, vr)
		if want := oldFileView(m, "/memories/f", data, vr); got != want {
			t.Fatalf("case %d (max %d, range %v, data %q):\n got %q\nwant %q", iter, maxChars, vr, data, got, want)
		}
	}
}

// compareUTF16 orders as lessUTF16, and smallestFirst puts the k smallest
// first, in that order, whatever k.
func TestSmallestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "B", "_", "-", "0", "é", "\uff61", "\ue000", "😀", "\U0001F4A9", "\xff", "ab", ""}
	for iter := range 500 {
		names := make([]string, rng.IntN(300))
		for i := range names {
			var sb strings.Builder
			for range 1 + rng.IntN(4) {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			names[i] = fmt.Sprintf("%s%d", sb.String(), i) // unique
		}
		for _, a := range names[:min(len(names), 30)] {
			for _, b := range names[:min(len(names), 30)] {
				if want := lessUTF16(a, b); (compareUTF16(a, b) < 0) != want {
					t.Fatalf("compareUTF16(%q, %q) = %d, lessUTF16 says %v", a, b, compareUTF16(a, b), want)
				}
			}
		}
		want := slices.Clone(names)
		slices.SortFunc(want, func(a, b string) int { return compareUTF16(a, b) })
		k := rng.IntN(len(names) + 2)
		got := slices.Clone(names)
		n := smallestFirst(got, k, func(s string) string { return s })
		if n != min(k, len(names)) || !slices.Equal(got[:n], want[:n]) {
			t.Fatalf("case %d: smallestFirst(k=%d) front = %q, want %q", iter, k, got[:n], want[:n])
		}
		slices.Sort(got)
		slices.Sort(names)
		if !slices.Equal(got, names) {
			t.Fatalf("case %d: smallestFirst lost or duplicated names", iter)
		}
	}
}
