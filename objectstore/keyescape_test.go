package objectstore

import "testing"

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
