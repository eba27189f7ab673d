package secretscan

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// freshScanner is a scanner on text with empty caches.
func freshScanner(text []byte) *scanner {
	return &scanner{text: text, runs: make([]runCache, len(rules)), covered: make([]int, len(rules)),
		openAIMarker: cursor{lit: openAIMarker}, keyMarker: cursor{lit: "PRIVATE KEY"}, newline: cursor{lit: "\n"}}
}

// refScan is Scan without what lets it walk a text once: each anchor is
// tried on a scanner with empty caches, and none is skipped as inside a
// run already taken. Only the ends of the secrets found before are kept,
// which change what stands alone.
func refScan(text []byte) []Finding {
	ends := map[int]bool{}
	var found []Finding
	for i := 0; i+3 <= len(text); i++ {
		for _, a := range anchorIndex.byFirst[text[i]] {
			if !a.at(text, i) {
				continue
			}
			s := freshScanner(text)
			s.ends = ends
			if f, ok := a.rule.match(s, i, false); ok {
				found = append(found, f)
				ends[f.End] = true
			}
		}
	}
	s := freshScanner(text)
	s.ends = ends
	found = append(found, cards(s)...)
	return ordered(text, found)
}

// TestScanCachesChangeNoAnswer: the caches and shortcuts that keep a scan
// linear (runs and searches walked once, anchors inside a run already
// taken skipped) change none of its findings, on texts glued together
// from the parts of secrets. A Slack webhook URL glued to the end of
// another was skipped as inside its run, and its secret part survived the
// first one's redaction.
func TestScanCachesChangeNoAnswer(t *testing.T) {
	pieces := []string{"sk-proj-", "sk-svcacct-", "T3BlbkFJ", strings.Repeat("Ab3_-x9Z", 3), "abcdefghij", "0123456789", "-", "_", ".", " ", "\n", "eyJ", "eyJhbGciOiJIUzI1NiIsInR5cCI6", "glpat-", "xoxb-", "1234567890", "hooks.slack.com/services/", "/", "sk-ant-api03-",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "MIIE", "X: ", "ghp_", "AKIA", "IOSFODNN7EXAMPLE", "4111", "://", "u:", "p@", "sk_live_", "AIza", "secretAccessKey=", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 30000 {
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := []byte(b.String())
		got, want := Scan(text), refScan(text)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d %q:\n got %+v\nwant %+v", n, text, got, want)
		}
	}
}
