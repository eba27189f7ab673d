package objectstore

import (
	"net/url"
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
