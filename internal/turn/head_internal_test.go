package turn

import "testing"

// head cuts on a character boundary, and marks a cut.
func TestHead(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes
		{"é", 1, "…"},
	} {
		if got := head(c.s, c.n); got != c.want {
			t.Errorf("head(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
