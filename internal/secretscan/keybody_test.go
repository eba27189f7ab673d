package secretscan

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// keyBodyWhole is keyBody as a walk of the text between the header and
// the END line alone, each header walking it again: what keyBody must
// answer, at a cost that was quadratic in the headers of a text.
func keyBodyWhole(b []byte) bool {
	i := 0
	for first := true; i < len(b); first = false {
		for i < len(b) && isBlank(b[i]) {
			i++
		}
		j := i
		for !first && j < len(b) && (isWord(b[j]) || b[j] == '-') {
			j++
		}
		if j > i && j+1 < len(b) && b[j] == ':' && b[j+1] == ' ' {
			for j < len(b) && b[j] != '\n' {
				j++
			}
			i = j + 1
			continue
		}
		for i < len(b) && isBase64(b[i]) {
			i++
		}
		for i < len(b) && isBlank(b[i]) {
			i++
		}
		if i < len(b) && b[i] != '\n' {
			return false
		}
		i++
	}
	return true
}

// TestKeyBodyMatchesWholeWalk: keyBody, which shares its walk of the
// lines after a header among the headers of a text, answers as a walk of
// each header's text alone does, asked in order on one scanner (as a
// scan asks) and on a fresh one, for texts made of the pieces of keys,
// header lines, prose and END lines.
func TestKeyBodyMatchesWholeWalk(t *testing.T) {
	pieces := []string{"MIIE", "ab+/=", "\\n", "\n", " ", "\t", "\r", ":", ": ", "X", "Proc-Type", "-", "x y",
		"-----END PRIVATE KEY-----", "-----BEGIN", "é", "."}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b bytes.Buffer
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteString("-----END PRIVATE KEY-----")
		text := b.Bytes()
		var ends []int
		for i := 0; ; {
			j := bytes.Index(text[i:], []byte("-----END"))
			if j < 0 {
				break
			}
			ends = append(ends, i+j)
			i += j + 1
		}
		shared := &scanner{text: text}
		for start := range len(text) {
			for _, e := range ends {
				if e < start {
					continue
				}
				want := keyBodyWhole(text[start:e])
				if got := keyBody(&scanner{text: text}, start, e); got != want {
					t.Fatalf("%q from %d to %d: keyBody %v, want %v", text, start, e, got, want)
				}
				if e == ends[len(ends)-1] {
					if got := keyBody(shared, start, e); got != want {
						t.Fatalf("%q from %d to %d, asked in order: keyBody %v, want %v", text, start, e, got, want)
					}
				}
			}
		}
	}
}
