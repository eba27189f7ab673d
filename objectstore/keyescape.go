package objectstore

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// A file+blob bucket stores the object KEY as the file DIR/KEY, with the
// same escapes as gocloud's directory driver, which earlier versions of
// this package used, so that a directory written by either reads the same
// in both: a rune that a path cannot hold as it is becomes "__0x<hex>__"
// (a control character, the "/" of "../" or "//" and a key's trailing
// "/"), and so does the first "_" of any text that would read as such an
// escape in the path (readsAsEscape), so that the mapping is one to one. Keys memtool makes need an
// escape only in the second case (a name holding "__0x41__", say).

// escapeFileKey returns the file path (slash-separated) of key.
func escapeFileKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); {
		r, n := utf8.DecodeRuneInString(key[i:])
		switch {
		case needsEscape(key, i, r):
			if b.Len() == 0 {
				b.WriteString(key[:i])
			}
			b.WriteString("__0x")
			b.WriteString(strconv.FormatInt(int64(r), 16))
			b.WriteString("__")
		case b.Len() > 0:
			b.WriteString(key[i : i+n])
		}
		i += n
	}
	if b.Len() == 0 {
		return key
	}
	return b.String()
}

// needsEscape says whether the rune r at byte i of key is written as an
// escape.
func needsEscape(key string, i int, r rune) bool {
	return escapedRune(key, i, r) || readsAsEscape(key, i)
}

// escapedRune says whether the rune r at byte i of key is one that a path
// cannot hold as it is: a control character, the "/" of "../" or "//",
// and a key's trailing "/".
func escapedRune(key string, i int, r rune) bool {
	switch {
	case r < 0x20:
		return true
	case r == '/' && (strings.HasSuffix(key[:i], "..") || strings.HasSuffix(key[:i], "/") || i == len(key)-1):
		return true
	}
	return false
}

// readsAsEscape says whether the text of key at byte i, left as it is,
// would read as an escape in the escaped path: "__0x<hex>" followed by
// "__", where each "_" may also be the start of the escape of the rune
// there ("p/__0x2f/" is "p/__0x5f___0x2f__0x2f__", not "p/__0x2f__0x2f__",
// which is the escape of "p//0x2f__"). Without an escaped rune right
// there, this is the text "__0x<hex>__" (the only case in keys memtool
// makes, which hold no control character, "//" or trailing "/", and whose
// "/" after ".." follows no hex digit), so the escape of those keys is
// what it always was.
func readsAsEscape(key string, i int) bool {
	if !strings.HasPrefix(key[i:], "__0x") {
		return false
	}
	// The hex digits run to the first "_" of the escaped path: a "_", or
	// the start of an escaped rune.
	escapedAt := func(j int) bool { return key[j] == '_' || escapedRune(key, j, rune(key[j])) }
	j := i + 4
	for j < len(key) && !escapedAt(j) {
		j++
	}
	if j == len(key) {
		return false
	}
	if _, err := strconv.ParseInt(key[i+4:j], 16, 32); err != nil {
		return false
	}
	// An escaped rune at j starts with "__"; a "_" at j needs another "_"
	// (or an escaped rune's first "_") after it.
	return key[j] != '_' || j+1 < len(key) && escapedAt(j+1)
}

// unescapeFileKey is the inverse of escapeFileKey.
func unescapeFileKey(path string) string {
	if !strings.Contains(path, "__0x") {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(path); {
		if r, n, ok := unescapeAt(path[i:]); ok {
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte(path[i])
		i++
	}
	return b.String()
}

// unescapeAt reads the escape "__0x<hex>__" at the start of s: the rune
// it stands for and its length.
func unescapeAt(s string) (r rune, n int, ok bool) {
	if !strings.HasPrefix(s, "__0x") {
		return 0, 0, false
	}
	end := strings.IndexByte(s[4:], '_')
	if end < 0 || !strings.HasPrefix(s[4+end:], "__") {
		return 0, 0, false
	}
	v, err := strconv.ParseInt(s[4:4+end], 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return rune(v), 4 + end + 2, true
}
