package memtool_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
)

// searchDiffPieces are what the differential corpus and its queries are made
// of: case folding that is not ASCII (Turkish dotted and dotless i, ß,
// final sigma, the Kelvin sign, the long s), NFD text, CRLF line ends,
// bytes that are not UTF-8, characters of four bytes, and what SQL and
// FTS5 quote.
var searchDiffPieces = []string{
	"abc", "ABC", "Abc", "tri", "TRI", "gram", "xyz", "i", "I", "İ", "ı", "ß", "SS", "ss", "ς", "σ", "Σ",
	"K", "k", "\u212a", "ſ", "s", "S", "e\u0301", "é", "É", "\r", "\xff", "\xc3", "\xa9", "\x80", "\xe2\x82",
	"\"", "%", "_", "\\", "'", " ", "\t", "\uFFFD", "\uFFFF", "𝔸", "𝔞", "\u0345", "ǅ", "ǆ", "Ω", "\u2126",
	".", "*", "(", ")", "\n", "\n", "\r\n",
}

// searchDiffText is a random text of n pieces.
func searchDiffText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(searchDiffPieces[rng.IntN(len(searchDiffPieces))])
	}
	return b.String()
}

// searchDiffQueries are random queries on corpus: substrings of its lines, as
// literals and as regular expressions made of them, in both cases.
func searchDiffQueries(rng *rand.Rand, corpus []string, n int) []memtool.SearchQuery {
	sub := func() string {
		for {
			text := strings.ToValidUTF8(corpus[rng.IntN(len(corpus))], "\uFFFD")
			lines := strings.Split(text, "\n")
			line := []rune(lines[rng.IntN(len(lines))])
			if len(line) == 0 {
				continue
			}
			i := rng.IntN(len(line))
			j := min(len(line), i+1+rng.IntN(8))
			return string(line[i:j])
		}
	}
	var qs []memtool.SearchQuery
	for range n {
		q := memtool.SearchQuery{CaseSensitive: rng.IntN(2) == 0, Limit: memtool.MaxSearchLimit}
		switch rng.IntN(4) {
		case 0, 1:
			q.Query = sub()
			if rng.IntN(3) == 0 {
				q.Query = strings.ToUpper(q.Query)
			}
		case 2:
			q.Query = searchDiffText(rng, 1+rng.IntN(3))
		case 3:
			q.Regex = true
			var parts []string
			for range 1 + rng.IntN(3) {
				p := regexp.QuoteMeta(sub())
				switch rng.IntN(7) {
				case 0:
					p = "(" + p + ")?"
				case 1:
					p = p + "|" + regexp.QuoteMeta(sub())
				case 2:
					p = "^" + p
				case 3:
					p = p + "$"
				case 4:
					p = `\b` + p
				case 5:
					p = "(?:" + p + ")*"
				}
				parts = append(parts, p)
			}
			q.Query = strings.Join(parts, [...]string{"", ".", ".*", `\s*`}[rng.IntN(4)])
		}
		if utf8.ValidString(q.Query) && len(q.Query) <= memtool.MaxSearchQuery {
			qs = append(qs, q)
		}
	}
	return qs
}

// searchScanOnly is a store without its search index.
type searchScanOnly struct{ memtool.Store }

// checkIndexDiff writes a random corpus to s, more files than SQLite
// leaves pending, and checks that random queries find with the index
// what a scan finds.
func checkIndexDiff(t *testing.T, s memtool.Store, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	ctx := t.Context()
	var corpus []string
	for d := range 4 {
		if err := s.Mkdir(ctx, fmt.Sprintf("d%d", d)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		text := searchDiffText(rng, rng.IntN(60))
		corpus = append(corpus, text)
		name := fmt.Sprintf("d%d/f%03d.md", rng.IntN(4), i)
		if err := s.WriteFile(ctx, name, []byte(text), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range searchDiffQueries(rng, corpus, 120) {
		for _, p := range []string{"", "/memories/d2/"} {
			q.Path = p
			got, err := memtool.Search(ctx, s, q, 0)
			if err != nil {
				t.Fatalf("Search(%#v): %v", q, err)
			}
			want, err := memtool.Search(ctx, searchScanOnly{s}, q, 0)
			if err != nil {
				t.Fatalf("scan(%#v): %v", q, err)
			}
			if got.Total != want.Total || !slices.Equal(got.Matches, want.Matches) {
				t.Errorf("Search(%#v) with the index: %d lines %+v\nscan: %d lines %+v", q, got.Total, got.Matches, want.Total, want.Matches)
			}
		}
	}
}

// The index of SQLite and of PostgreSQL finds the lines a scan finds on
// a random corpus of tricky text, for random queries.
func TestSearchIndexDiffSQLite(t *testing.T) {
	for seed := range uint64(1) {
		checkIndexDiff(t, backend(t, "sqlite")(t), seed)
	}
}

func TestSearchIndexDiffPostgres(t *testing.T) {
	for seed := range uint64(1) {
		checkIndexDiff(t, backend(t, "postgres")(t), seed)
	}
}

// A query as long as a query may be, of as many trigrams as it can hold,
// is looked up in the index, not refused by it.
func TestSearchIndexLongQuery(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < memtool.MaxSearchQuery-4 {
		if r := rune(0x100 + rng.IntN(0x500)); utf8.ValidRune(r) {
			b.WriteRune(r)
		}
	}
	long := b.String()
	var a strings.Builder
	for a.Len() < memtool.MaxSearchQuery-4 {
		a.WriteByte("abcdefghijlmnopqrtuvwxyz0123456789 "[rng.IntN(35)])
	}
	ascii := a.String()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			s := backend(t, name)(t)
			for i := range 70 {
				text := fmt.Sprintf("line %d\n", i)
				if i == 3 {
					text += "x" + long + "y\n" + strings.ToUpper(ascii) + "\n"
				}
				if err := s.WriteFile(t.Context(), fmt.Sprintf("f%02d.md", i), []byte(text), memtool.Replace); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []memtool.SearchQuery{{Query: long}, {Query: long, CaseSensitive: true}, {Query: ascii}, {Query: ascii, Regex: true}} {
				res, err := memtool.Search(t.Context(), s, q, 0)
				if err != nil || res.Total != 1 {
					t.Errorf("Search(%.40q…, case sensitive %v): %d lines, %v", q.Query, q.CaseSensitive, res.Total, err)
				}
			}
		})
	}
}
