package objectstore

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestFileKeyEscapes: the file of a key is the key, but for the escapes
// gocloud's directory driver makes (TestFileBucketLayout, with -tags gcs,
// checks that both read each other's files), and unescaping gives the key
// back.
func TestFileKeyEscapes(t *testing.T) {
	for key, want := range map[string]string{
		"p/f/notes.md":   "p/f/notes.md",
		"f/__0x41__":     "f/__0x5f___0x41__",
		"f/a__0x2f__b":   "f/a__0x5f___0x2f__b",
		"f/__0x__":       "f/__0x__", // not an escape: no digits
		"f/ü_0x41__":     "f/ü_0x41__",
		"f/a\x01b":       "f/a__0x1__b",
		"f/a../b":        "f/a..__0x2f__b",
		"f//b":           "f/__0x2f__b",
		"f/d/":           "f/d__0x2f__",
		"f/ü__0x7a__ö":   "f/ü__0x5f___0x7a__ö",
		"__0x10ffff__/x": "__0x5f___0x10ffff__/x",
	} {
		if got := escapeFileKey(key); got != want {
			t.Errorf("escapeFileKey(%q) = %q, want %q", key, got, want)
		}
		if back := unescapeFileKey(want); back != key {
			t.Errorf("unescapeFileKey(%q) = %q, want %q", want, back, key)
		}
	}
}

// A copy's movingFrom value is the source key path-escaped, as earlier
// versions wrote it (so that they still read it), unless that is too long
// for S3's metadata; then it is base64 behind a prefix no escaped key has.
// Both read back to the key.
func TestSourceValue(t *testing.T) {
	for _, src := range []string{"f/notes.md", "pre/f/a b%c.md", "f/" + strings.Repeat("é", 400), "f/" + strings.Repeat("%", 400)} {
		v := sourceValue(src)
		escaped := url.PathEscape(src)
		if len(escaped) <= maxSourceValue && v != escaped {
			t.Errorf("sourceValue(%.40q) = %.40q, want the path-escaped key", src, v)
		}
		if len(v) > 1400 || strings.ContainsFunc(v, func(r rune) bool { return r > 0x7e || r < 0x20 }) {
			t.Errorf("sourceValue(%.40q) is %d bytes or not printable ASCII", src, len(v))
		}
		if got, err := sourceKey(v); err != nil || got != src {
			t.Errorf("sourceKey(sourceValue(%.40q)) = %.40q, %v", src, got, err)
		}
	}
}

// Text that reads as an escape only once the rune after it is escaped
// ("__0x2f" before a trailing "/") has its first "_" escaped too, so that
// two keys never share a file: "p/__0x2f/" and "p//0x2f__" once both
// were "p/__0x2f__0x2f__".
func TestFileKeyEscapeBeforeEscapedRune(t *testing.T) {
	for key, want := range map[string]string{
		"p/__0x2f/":   "p/__0x5f___0x2f__0x2f__",
		"p//0x2f__":   "p/__0x2f__0x2f__",
		"p/__0x41_/":  "p/__0x5f___0x41___0x2f__",
		"p/__0x1\x01": "p/__0x5f___0x1__0x1__",
		"p/__0x41_/x": "p/__0x41_/x", // that "/" is not escaped
	} {
		if got := escapeFileKey(key); got != want {
			t.Errorf("escapeFileKey(%q) = %q, want %q", key, got, want)
		}
		if back := unescapeFileKey(want); back != key {
			t.Errorf("unescapeFileKey(%q) = %q, want %q", want, back, key)
		}
	}
}

// Every key of up to six pieces that make or break escapes unescapes back
// from its file: the mapping is one to one. A key with no control
// character, "//" or trailing "/" (every key memtool makes) has the file
// it had before escapes were looked for before escaped runes
// (oldEscapeFileKey), so existing directories read the same.
func TestFileKeyEscapeRoundTrips(t *testing.T) {
	pieces := []string{"_", "__0x", "2f", "/", "\x01", ".", "a"}
	var walk func(key string, depth int)
	walk = func(key string, depth int) {
		esc := escapeFileKey(key)
		if back := unescapeFileKey(esc); back != key {
			t.Fatalf("%q -> %q -> %q", key, esc, back)
		}
		if !strings.ContainsAny(key, "\x01") && !strings.Contains(key, "//") && !strings.HasSuffix(key, "/") {
			if old := oldEscapeFileKey(key); esc != old {
				t.Fatalf("escapeFileKey(%q) = %q, was %q", key, esc, old)
			}
		}
		if depth == 6 {
			return
		}
		for _, p := range pieces {
			walk(key+p, depth+1)
		}
	}
	walk("", 0)
}

// oldEscapeFileKey is escapeFileKey as it was, which escaped the first "_"
// of "__0x<hex>__" in the key only.
func oldEscapeFileKey(key string) string {
	var b strings.Builder
	for i, r := range key {
		_, _, ok := unescapeAt(key[i:])
		if ok || escapedRune(key, i, r) {
			b.WriteString("__0x" + strconv.FormatInt(int64(r), 16) + "__")
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
