package memtool

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// formatSize prints a byte count the way the reference handler does: base
// 1024, units B K M G T, a whole value without decimals, otherwise one
// decimal rounded half up (1280 → 1.3K).
func formatSize(n int64) string {
	if n <= 0 {
		return "0B"
	}
	units := []string{"B", "K", "M", "G", "T"}
	i := int(math.Floor(math.Log(float64(n)) / math.Log(1024)))
	if i >= len(units) {
		i = len(units) - 1
	}
	v := float64(n) / math.Pow(1024, float64(i))
	if v == math.Trunc(v) {
		return strconv.FormatInt(int64(v), 10) + units[i]
	}
	// Half up at one decimal, as JavaScript's toFixed(1) does for these
	// exactly representable halves (x.x5 with a power-of-two denominator).
	tenths := math.Floor(v*10 + 0.5)
	return strconv.FormatFloat(tenths/10, 'f', 1, 64) + units[i]
}

// lessUTF16 orders names by UTF-16 code units, as JavaScript's default sort
// does (astral characters sort before U+E000–U+FFFF).
func lessUTF16(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return utf16Key(ra) < utf16Key(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b != ""
}

// compareUTF16 orders names as lessUTF16 does, comparing bytes where they
// first differ when both are ASCII (or one name ends there): up to that
// point the names decode alike, so the order is the bytes' order. Only
// names that differ first in a non-ASCII byte are decoded.
func compareUTF16(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if (i == len(a) || a[i] < utf8.RuneSelf) && (i == len(b) || b[i] < utf8.RuneSelf) {
		return strings.Compare(a[i:], b[i:])
	}
	switch {
	case lessUTF16(a, b):
		return -1
	case lessUTF16(b, a):
		return 1
	}
	return 0
}

// utf16Key is the first UTF-16 code unit of r, then the second, as one number.
func utf16Key(r rune) uint32 {
	if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError || r2 != utf8.RuneError {
		return uint32(r1)<<16 | uint32(r2)
	}
	return uint32(r) << 16
}

// decodeLossy returns b as valid UTF-8, with one U+FFFD for each maximal
// invalid subsequence (the WHATWG decoder's rule, which the reference
// handler follows), not one per byte.
func decodeLossy(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(appendLossy(make([]byte, 0, len(b)+16), b))
}

// appendLossy appends b to dst decoded as decodeLossy does.
func appendLossy(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			dst = append(dst, b[i:i+size]...)
			i += size
			continue
		}
		dst = utf8.AppendRune(dst, utf8.RuneError)
		i += maximalSubpart(b[i:])
	}
	return dst
}

// runeCountLossy is the length in characters of decodeLossy(b).
func runeCountLossy(b []byte) int {
	if utf8.Valid(b) {
		return utf8.RuneCount(b)
	}
	n := 0
	for i := 0; i < len(b); n++ {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			size = maximalSubpart(b[i:])
		}
		i += size
	}
	return n
}

// utf8Leads are the lead bytes of multi-byte UTF-8 sequences, as ranges:
// for each, the range its second byte must fall in and how many
// continuation bytes it takes (the Unicode Standard's table of
// well-formed UTF-8 byte sequences, chapter 3).
var utf8Leads = []struct{ first, last, lo, hi, need byte }{
	{0xC2, 0xDF, 0x80, 0xBF, 1},
	{0xE0, 0xE0, 0xA0, 0xBF, 2},
	{0xE1, 0xEC, 0x80, 0xBF, 2},
	{0xED, 0xED, 0x80, 0x9F, 2},
	{0xEE, 0xEF, 0x80, 0xBF, 2},
	{0xF0, 0xF0, 0x90, 0xBF, 3},
	{0xF1, 0xF3, 0x80, 0xBF, 3},
	{0xF4, 0xF4, 0x80, 0x8F, 3},
}

// maximalSubpart is the length of the invalid sequence at the start of b:
// the lead byte plus the continuation bytes that could still have completed it.
func maximalSubpart(b []byte) int {
	for _, l := range utf8Leads {
		if b[0] < l.first || b[0] > l.last {
			continue
		}
		lo, hi := l.lo, l.hi
		n := 1
		for ; n <= int(l.need) && n < len(b); n++ {
			if b[n] < lo || b[n] > hi {
				break
			}
			lo, hi = 0x80, 0xBF
		}
		return n
	}
	return 1
}

// numberLines writes lines with 1-based numbers starting at first, each as
// "%6d\t%s", joined by "\n".
func numberLines(sb *strings.Builder, lines []string, first int) {
	var buf [32]byte
	for i, line := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.Write(appendNumber(buf[:0], first+i))
		sb.WriteString(line)
	}
}

// appendNumbered appends line as a numbered line, "%6d\t%s", its bytes
// decoded as decodeLossy does.
func appendNumbered(dst []byte, n int, line []byte) []byte {
	return appendLossy(appendNumber(dst, n), line)
}

// appendNumber appends a line number right-aligned in six columns and a tab.
func appendNumber(dst []byte, n int) []byte {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	for pad := 6 - len(digits); pad > 0; pad-- {
		dst = append(dst, ' ')
	}
	return append(append(dst, digits...), '\t')
}

// formatCount prints n with thousands separators (16000 → 16,000).
func formatCount(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + formatCount(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// truncateRunes returns the first n characters (code points) of s.
func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
