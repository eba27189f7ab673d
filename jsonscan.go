package memtool

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is ParseCommand's fast path: one pass over the input that
// validates it as JSON and splits the top-level object into its members,
// without encoding/json's token-by-token decoder. It handles the inputs a
// model sends (plain ASCII keys, a few members, shallow values); on
// anything else, valid or not, it gives up and ParseCommand decodes with
// encoding/json, which then also words the error. So it never has to
// produce an error text itself, only to agree with encoding/json on every
// input it accepts (TestFastParseAgrees, FuzzFastParse).

// maxFastMembers and maxFastDepth bound what the fast path takes on.
const (
	maxFastMembers = 16
	maxFastDepth   = 32
)

// A member is one key and its raw JSON value, as sent.
type member struct {
	key string
	raw string
}

// members are an object's members in input order, keys unique.
type members []member

// get returns the raw value of key and whether it is present.
func (ms members) get(key string) (string, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.raw, true
		}
	}
	return "", false
}

// jsonScanner walks a JSON text held in s.
type jsonScanner struct {
	s     string
	i     int
	depth int
}

func (sc *jsonScanner) skipSpace() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// fastMembers splits input, which must be exactly one JSON object with
// at most maxFastMembers members whose keys are printable ASCII without
// escapes, into its members. ok is false for anything else, including
// duplicate keys, which the caller then refuses through the slow path
// with the proper message.
func fastMembers(input string, buf *[maxFastMembers]member) (ms members, ok bool) {
	sc := jsonScanner{s: input}
	sc.skipSpace()
	ms = buf[:0]
	ok = sc.elements('{', '}', func() bool {
		if len(ms) == maxFastMembers {
			return false
		}
		key, ok := sc.plainKey()
		if !ok || !sc.colon() {
			return false
		}
		start := sc.i
		if !sc.value() {
			return false
		}
		ms = append(ms, member{key, sc.s[start:sc.i]})
		return true
	})
	if !ok {
		return nil, false
	}
	sc.skipSpace()
	return ms, sc.i == len(sc.s)
}

// elements reads the array or object at sc.i, which opens with open and
// closes with end: each reads one element (an object's member) from sc.i
// and reports whether it is valid. elements reports whether the whole
// container is, and leaves sc.i after its end.
func (sc *jsonScanner) elements(open, end byte, each func() bool) bool {
	if sc.i >= len(sc.s) || sc.s[sc.i] != open {
		return false
	}
	sc.i++
	sc.skipSpace()
	if sc.i < len(sc.s) && sc.s[sc.i] == end {
		sc.i++
		return true
	}
	for {
		if !each() {
			return false
		}
		sc.skipSpace()
		if sc.i >= len(sc.s) {
			return false
		}
		c := sc.s[sc.i]
		sc.i++
		if c == end {
			return true
		}
		if c != ',' {
			return false
		}
		sc.skipSpace()
	}
}

// colon reads the colon after a member's key, and the space around it.
func (sc *jsonScanner) colon() bool {
	sc.skipSpace()
	if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
		return false
	}
	sc.i++
	sc.skipSpace()
	return true
}

// plainKey reads a key of printable ASCII without escapes.
func (sc *jsonScanner) plainKey() (string, bool) {
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", false
	}
	start := sc.i + 1
	for j := start; j < len(sc.s); j++ {
		switch c := sc.s[j]; {
		case c == '"':
			sc.i = j + 1
			return sc.s[start:j], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", false
		}
	}
	return "", false
}

// value skips one JSON value, reporting whether it is valid.
func (sc *jsonScanner) value() bool {
	if sc.i >= len(sc.s) {
		return false
	}
	switch c := sc.s[sc.i]; {
	case c == '"':
		return sc.str()
	case c == '{' || c == '[':
		return sc.container(c)
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return sc.number()
	}
	return false
}

func (sc *jsonScanner) literal(lit string) bool {
	if !strings.HasPrefix(sc.s[sc.i:], lit) {
		return false
	}
	sc.i += len(lit)
	return true
}

// str skips a string: no control characters, only JSON's escapes. Bytes
// that are not UTF-8 are valid JSON to encoding/json (it decodes them as
// U+FFFD), so they are here too.
func (sc *jsonScanner) str() bool {
	for j := sc.i + 1; j < len(sc.s); j++ {
		switch c := sc.s[j]; {
		case c == '"':
			sc.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(sc.s) {
				return false
			}
			switch sc.s[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(sc.s) || !isHex4(sc.s[j+1:j+5]) {
					return false
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex4(s string) bool {
	for i := range 4 {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (sc *jsonScanner) container(open byte) bool {
	if sc.depth == maxFastDepth {
		return false
	}
	sc.depth++
	defer func() { sc.depth-- }()
	if open == '[' {
		return sc.elements('[', ']', sc.value)
	}
	return sc.elements('{', '}', func() bool {
		return sc.i < len(sc.s) && sc.s[sc.i] == '"' && sc.str() && sc.colon() && sc.value()
	})
}

// number skips -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (sc *jsonScanner) number() bool {
	s, i := sc.s, sc.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	sc.i = i
	return true
}

func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// splitArray returns the raw elements of raw, a valid JSON array, or
// ok false if raw is not an array.
func splitArray(raw string, buf []string) (elems []string, ok bool) {
	sc := jsonScanner{s: raw}
	sc.skipSpace()
	elems = buf[:0]
	ok = sc.elements('[', ']', func() bool {
		start := sc.i
		if !sc.value() {
			return false
		}
		elems = append(elems, sc.s[start:sc.i])
		return true
	})
	if !ok {
		return nil, false
	}
	return elems, true
}

// unquote decodes raw, a valid JSON string literal, as encoding/json
// does: escapes resolved, a lone surrogate and every byte that is not
// UTF-8 read as U+FFFD. ok is false if raw is not a string.
func unquote(raw string) (s string, ok bool) { return decodeString(raw, false) }

// unquoteSurrogates is unquote, but keeps an escaped lone surrogate as
// its three-byte (WTF-8) encoding, which no UTF-8 text holds: an old_str
// that names one matches nothing, as in the TS SDK, whose strings are
// UTF-16, rather than every U+FFFD in the file.
func unquoteSurrogates(raw string) (s string, ok bool) { return decodeString(raw, true) }

func decodeString(raw string, keepSurrogates bool) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	clean := true
	for i := 0; i < len(body); i++ {
		if c := body[i]; c == '\\' || c >= utf8.RuneSelf {
			clean = false
			break
		}
	}
	if clean || strings.IndexByte(body, '\\') < 0 && utf8.ValidString(body) {
		return body, true
	}
	var sb strings.Builder
	sb.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			i++
			switch e := body[i]; e {
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r := hexRune(body[i+1 : i+5])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
						r2 = hexRune(body[i+3 : i+7])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						sb.WriteRune(dec)
						i += 6
						break
					}
					if keepSurrogates {
						sb.Write([]byte{0xE0 | byte(r>>12), 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F})
						break
					}
					r = utf8.RuneError
				}
				sb.WriteRune(r)
			default: // '"', '\\', '/'
				sb.WriteByte(e)
			}
			i++
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(body[i:])
			if r == utf8.RuneError && size == 1 {
				sb.WriteRune(utf8.RuneError)
			} else {
				sb.WriteString(body[i : i+size])
			}
			i += size
		}
	}
	return sb.String(), true
}

func hexRune(h string) rune {
	n, _ := strconv.ParseUint(h, 16, 32)
	return rune(n)
}
