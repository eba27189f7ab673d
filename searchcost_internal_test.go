package memtool

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// A case-ignoring search for a word whose first letter is frequent in a
// file and its other case absent ("abc" in "xaxaxa…") passed over the
// file in time quadratic in its size: for every letter but the first,
// it looked for the other case through the whole rest of the file. A
// file of a few megabytes took minutes, with no look at the deadline.
func TestFoldCheckIsLinear(t *testing.T) {
	data := bytes.Repeat([]byte("xa"), 2<<20) // 4 MiB
	done := make(chan bool, 1)
	go func() { done <- containsFoldASCII(data, "abc") }()
	select {
	case got := <-done:
		if got {
			t.Error("containsFoldASCII found abc in xaxa…")
		}
	case <-time.After(30 * time.Second): // linear: milliseconds; quadratic: minutes
		t.Fatal("containsFoldASCII on 4 MiB did not end in 30 s")
	}
	for _, c := range []struct {
		data, t string
		want    bool
	}{
		{"xxABcxx", "abc", true}, {"xxabXabc", "abc", true}, {"ab", "abc", false},
		{"aBC", "abc", true}, {"xx1-2", "1-2", true}, {"xaxAbx", "abc", false}, {"AxaBc", "abc", true},
		{"zzzAAbC", "abc", true}, {"abab", "abc", false}, {"@", "@", true}, {"`", "@", false},
	} {
		if got := containsFoldASCII([]byte(c.data), c.t); got != c.want {
			t.Errorf("containsFoldASCII(%q, %q) = %v, want %v", c.data, c.t, got, c.want)
		}
	}
	// A long word that almost matches everywhere: "aaa…ab" in "aaaa…".
	long := strings.Repeat("a", 999) + "b"
	go func() { done <- containsFoldASCII(bytes.Repeat([]byte("A"), 4<<20), long) }()
	select {
	case got := <-done:
		if got {
			t.Error("containsFoldASCII found aaa…ab in AAAA…")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("containsFoldASCII of a 1,000-byte word on 4 MiB did not end in 30 s")
	}
	// Both ways of looking agree with a plain reading, on random text.
	rnd := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbB@`x1"
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return b
	}
	lower := func(b []byte) []byte {
		out := bytes.Clone(b)
		for i, c := range out {
			out[i] = lowerASCII(c)
		}
		return out
	}
	for range 20000 {
		data, tw := word(rnd.IntN(40)), word(1+rnd.IntN(4))
		want := bytes.Contains(lower(data), lower(tw))
		if got := containsFoldASCII(data, string(tw)); got != want {
			t.Fatalf("containsFoldASCII(%q, %q) = %v, want %v", data, tw, got, want)
		}
		if got := indexFoldHash(data, string(tw)); got != want {
			t.Fatalf("indexFoldHash(%q, %q) = %v, want %v", data, tw, got, want)
		}
	}
}
