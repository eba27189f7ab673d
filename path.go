package memtool

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Root is the virtual directory the model sees.
const Root = "/memories"

// Limits of the path gate.
const (
	MaxPathBytes      = 1024 // a whole path, in bytes
	MaxComponentBytes = 255  // one name, in bytes (NAME_MAX)
	MaxDepth          = 32   // names below /memories after resolving . and ..
)

// CleanPath is the path gate: it turns a virtual path as the model sent it
// into the clean name a Store uses, or refuses it.
//
// An accepted path maps to "" (the root itself) or to a slash-separated name
// of one or more components, none of them empty, ".", ".." or starting with
// "/", that satisfies fs.ValidPath and stays under the root. dir reports a
// trailing slash: the caller asked for a directory. CleanPath is pure: it
// looks at nothing but its argument.
func CleanPath(p string) (name string, dir bool, err error) {
	refuse := func(format string, args ...any) (string, bool, error) {
		return "", false, &PathError{Path: p, Reason: fmt.Sprintf(format, args...)}
	}
	if len(p) > MaxPathBytes {
		return refuse("Path is too long: %d bytes, more than the limit of %d bytes", len(p), MaxPathBytes)
	}
	// shown is p as the messages show it: quoted when it holds anything
	// unprintable, so that no control or invisible character reaches the
	// model's text raw, whichever check fails first.
	shown := p
	if !utf8.ValidString(p) || strings.IndexFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		shown = strconv.Quote(p)
	}
	if !utf8.ValidString(p) {
		return refuse("Path %s is not valid UTF-8", shown)
	}
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return refuse("Path must be %s or start with %s/, got: %s", Root, Root, shown)
	}
	for i, r := range p {
		if reason := refusedRune(r); reason != "" {
			return refuse("Path %s contains %s (U+%04X), which is not allowed", shown, reason, r)
		}
		if r == '%' && percentEscape(p[i:]) {
			return refuse("Path %s contains a percent-encoded character, which is not allowed (paths are never decoded)", shown)
		}
	}
	var parts []string
	for _, c := range strings.Split(p[len(Root):], "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(parts) == 0 {
				return refuse("Path %s would escape %s directory", shown, Root)
			}
			parts = parts[:len(parts)-1]
			continue
		}
		if reason := refusedName(c); reason != "" {
			return refuse("Path %s is not allowed: %s", shown, reason)
		}
		parts = append(parts, c)
	}
	if len(parts) > MaxDepth {
		return refuse("Path %s is too deep: %d levels below %s, more than the limit of %d", shown, len(parts), Root, MaxDepth)
	}
	return strings.Join(parts, "/"), strings.HasSuffix(p, "/"), nil
}

// VirtualPath is the inverse of CleanPath for a clean name.
func VirtualPath(name string) string {
	if name == "" {
		return Root
	}
	return Root + "/" + name
}

func isControl(r rune) bool { return unicode.IsControl(r) }

// lookalikes are runes that NFKC leaves alone but that read as a dot, a slash
// or a backslash.
var lookalikes = map[rune]bool{
	0x2044: true, // FRACTION SLASH
	0x2215: true, // DIVISION SLASH
	0x2216: true, // SET MINUS
	0x29F5: true, // REVERSE SOLIDUS OPERATOR
	0x29F8: true, // BIG SOLIDUS
	0x29F9: true, // BIG REVERSE SOLIDUS
	0x3002: true, // IDEOGRAPHIC FULL STOP
	0xFF61: true, // HALFWIDTH IDEOGRAPHIC FULL STOP
	0x2CFE: true, // COPTIC FULL STOP
	0x06D4: true, // ARABIC FULL STOP
	0x0701: true, // SYRIAC SUPRALINEAR FULL STOP
	0x0702: true, // SYRIAC SUBLINEAR FULL STOP
	0xA4F8: true, // LISU LETTER TONE MYA TI (a dot)
	0x1735: true, // PHILIPPINE SINGLE PUNCTUATION (a slash)
	0x30FB: true, // KATAKANA MIDDLE DOT
	// The other symbols and punctuation that Unicode's confusables.txt
	// maps to '/', '\' or '.' (its letters and digits, such as KATAKANA
	// LETTER NO, are left usable in names), and the heavy solidi.
	0x2041:  true, // CARET INSERTION POINT (a slash)
	0x2571:  true, // BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
	0x27CB:  true, // MATHEMATICAL RISING DIAGONAL
	0x31D3:  true, // CJK STROKE SP (a slash)
	0x1D23A: true, // GREEK INSTRUMENTAL NOTATION SYMBOL-47 (a slash)
	0x1F67C: true, // VERY HEAVY SOLIDUS
	0x2572:  true, // BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
	0x27CD:  true, // MATHEMATICAL FALLING DIAGONAL
	0x31D4:  true, // CJK STROKE D (a backslash)
	0x1D20F: true, // GREEK VOCAL NOTATION SYMBOL-16 (a backslash)
	0x1D23B: true, // GREEK INSTRUMENTAL NOTATION SYMBOL-48 (a backslash)
	0x1F67D: true, // VERY HEAVY REVERSE SOLIDUS
	0xA60E:  true, // VAI FULL STOP
	0x10A50: true, // KHAROSHTHI PUNCTUATION DOT
}

// refusedRune says why r may not appear in a path, or "" if it may.
func refusedRune(r rune) string {
	switch {
	case r == '\\':
		return "a backslash"
	case r == ':':
		return "a colon"
	case isControl(r):
		return "a control character"
	case r < utf8.RuneSelf:
		return ""
	case r == utf8.RuneError:
		return "the replacement character"
	case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		return "an invisible formatting character"
	case unicode.Is(unicode.Zs, r):
		return "a non-ASCII space"
	case !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
		return "an unassigned or private-use character"
	case lookalikes[r]:
		return "a look-alike of '.', '/' or '\\'"
	case unicode.Is(nfkcUnstable, r):
		return "a character that Unicode normalisation (NFKC) would change"
	}
	return ""
}

// percentEscape reports whether s starts with a %XX or %uXXXX escape.
func percentEscape(s string) bool {
	hex := func(s string, n int) bool {
		if len(s) < n {
			return false
		}
		for i := 0; i < n; i++ {
			c := s[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	s = s[1:]
	if len(s) > 0 && (s[0] == 'u' || s[0] == 'U') && hex(s[1:], 4) {
		return true
	}
	return hex(s, 2)
}

// reservedPrefixes are names memtool and other memory stores keep for
// themselves: temp files of atomic writes, lock files, metadata.
var reservedPrefixes = []string{".memtool", ".memstore", ".tmp-", ".lock"}

// windowsDevices are the names Windows reserves, with or without an
// extension, in any case.
var windowsDevices = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM0": true, "COM1": true, "COM2": true, "COM3": true, "COM4": true,
	"COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT0": true, "LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true,
	"LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// refusedName says why one path component may not be used, or "" if it may.
func refusedName(c string) string {
	if len(c) > MaxComponentBytes {
		return fmt.Sprintf("a name is %d bytes long, more than the limit of %d bytes", len(c), MaxComponentBytes)
	}
	if last := c[len(c)-1]; last == '.' || last == ' ' {
		return fmt.Sprintf("the name %q ends with a dot or a space", c)
	}
	base, _, _ := strings.Cut(c, ".")
	if windowsDevices[strings.ToUpper(strings.TrimRight(base, " "))] {
		return fmt.Sprintf("%q is a reserved device name on Windows", c)
	}
	// In any case: on a case-insensitive file system (macOS, Windows)
	// ".MEMTOOL.LOCK" is the lock file.
	lower := strings.ToLower(c)
	for _, prefix := range reservedPrefixes {
		if strings.HasPrefix(lower, prefix) {
			return fmt.Sprintf("names starting with %q are reserved for the storage layer", prefix)
		}
	}
	return ""
}
