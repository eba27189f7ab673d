package memtool

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// FuzzIndexTerms: every line a query matches holds the query's index
// terms (in either ASCII case when they fold), so an index that looks
// them up never misses a match; and the file check that a scan makes
// first (mayMatch) passes every file with a matching line.
func FuzzIndexTerms(f *testing.F) {
	for _, seed := range []struct {
		query, line   string
		regex, folded bool
	}{
		{"alpha", "ALPHA beta", false, true},
		{"kelvin", "\u212aelvin", false, true},
		{"long s", "long \u017f", false, true},
		{"(?i)quokka", "QUOKKA", true, false},
		{"a+b(c)", "xxa+b(c)", false, false},
		{"foo(bar|baz)+qux", "foobazqux", true, true},
		{"(abc){2,}", "abcabc", true, false},
		{"straße", "STRAßE", false, true},
		{"caf\uFFFD", "caf\xe9", false, false},
	} {
		f.Add(seed.query, seed.line, seed.regex, seed.folded)
	}
	f.Fuzz(func(t *testing.T, query, line string, regex, folded bool) {
		sr, err := newSearch(SearchQuery{Query: query, Regex: regex, CaseSensitive: !folded}, DefaultMaxReadSize)
		if err != nil {
			return
		}
		text := decodeLossy([]byte(line))
		if strings.Contains(line, "\n") || !sr.match(text) {
			return
		}
		if !sr.mayMatch([]byte(line)) {
			t.Fatalf("query %q (regex %v, folded %v) matches %q, but the file check (terms %q, fold %v) passes it over", query, regex, folded, line, sr.terms, sr.foldCase)
		}
		for _, term := range sr.terms {
			if sr.foldCase && strings.IndexFunc(term, func(r rune) bool { return r >= 0x80 }) >= 0 {
				t.Fatalf("folded term %q holds non-ASCII", term)
			}
		}
	})
}

// indexTerms finds the literal runs every match holds (syntax.Parse
// writes a folded literal in upper case).
func TestIndexTerms(t *testing.T) {
	for _, c := range []struct {
		expr  string
		terms string
		fold  bool
	}{
		{`quokka`, "quokka", false},
		{`(?i)quokka`, "QUO|A", true}, // k splits it
		{`(?i)Wombat`, "WOMBAT", true},
		{`foo(bar|baz)+qux`, "foo|qux", false},
		{`(bar){2}x+ab`, "bar|ab", false},
		{`a.*b`, "", false},
		{`(?i)café au lait`, "CAF| AU LAIT", true},
		{`line$`, "line", false},
	} {
		re, err := syntax.Parse(c.expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		terms, fold := indexTerms(re)
		got := strings.Join(terms, "|")
		// Terms shorter than three characters are left out.
		var want []string
		for _, w := range strings.Split(c.terms, "|") {
			if len([]rune(w)) >= 3 {
				want = append(want, w)
			}
		}
		if got != strings.Join(want, "|") || fold != c.fold {
			t.Errorf("indexTerms(%s) = %q, %v; want %q, %v", c.expr, got, fold, strings.Join(want, "|"), c.fold)
		}
	}
}
