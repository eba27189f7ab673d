package memtool

import (
	"context"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Searcher is the optional capability of a store that keeps an index of
// its files' text, to find the files a search must look at without
// reading every file.
//
// SearchFiles calls fn once for each regular file below the directory dir
// ("" for the root; everything below it, at any depth) whose content
// holds every one of q.Terms and whose size is at most q.Limit bytes,
// with its name and content, in any order, never for entries the store
// keeps for itself; it may call fn for other files too (the caller checks
// every line). If fn returns an error, SearchFiles stops and returns it.
// An implementation that cannot (a Wrapper over a store without an
// index) returns an error wrapping errors.ErrUnsupported; callers then
// scan.
//
// Search asks a Searcher only for terms it can check by an index: each
// holds at least three characters, and with q.FoldCase every character
// is ASCII and its letters may match in either ASCII case.
//
// Forwarder does not forward it: a wrapper whose ReadFile changes content
// (decrypts it), hides files or records reads would be bypassed. A
// wrapper whose ReadFile passes content through unchanged opts in with a
// SearchFiles that calls ForwardSearchFiles.
type Searcher interface {
	SearchFiles(ctx context.Context, dir string, q IndexQuery, fn func(name string, data []byte) error) error
}

// An IndexQuery is what a Searcher looks for.
type IndexQuery struct {
	// Terms are strings a file must hold, each somewhere in it.
	Terms []string
	// FoldCase lets the ASCII letters of Terms match in either case.
	FoldCase bool
	// Limit is the largest file, in bytes, to return.
	Limit int64
}

// ForwardSearchFiles calls s's SearchFiles, or returns Unsupported if s
// is no Searcher.
func ForwardSearchFiles(ctx context.Context, s Store, dir string, q IndexQuery, fn func(name string, data []byte) error) error {
	if sr, ok := s.(Searcher); ok {
		return sr.SearchFiles(ctx, dir, q, fn)
	}
	return Unsupported("search", dir)
}

// dir searches every file below the directory name: with the store's
// index if it has one, else by a scan.
func (sr *search) dir(ctx context.Context, s Store, name string) error {
	if len(sr.terms) > 0 && Has[Searcher](s) {
		err := s.(Searcher).SearchFiles(ctx, name, IndexQuery{Terms: sr.terms, FoldCase: sr.foldCase, Limit: sr.readLimit},
			func(fname string, data []byte) error {
				// Only files below the directory searched: an index
				// that names another (a pattern that also matches a
				// sibling's name) must not put it in the answer.
				if isBelow(fname, name) && !hiddenBelow(name, fname) {
					sr.file(ctx, fname, data)
				}
				return ctx.Err()
			})
		if !unsupported(err) {
			return err
		}
	}
	return sr.scan(ctx, s, name)
}

// hiddenBelow reports whether the file name, below the directory dir,
// is or lies in an entry hidden from listings: a hidden name, or one a
// listing leaves out because no answer may show it (a line break in it
// would forge a line of the answer; see showable).
func hiddenBelow(dir, name string) bool {
	rel := name
	if dir != "" {
		rel = strings.TrimPrefix(name, dir+"/")
	}
	for c := range strings.SplitSeq(rel, "/") {
		if !visible(c) {
			return true
		}
	}
	return false
}

// hiddenName reports whether a listing leaves the entry out.
func hiddenName(name string) bool { return strings.HasPrefix(name, ".") || name == "node_modules" }

// indexTerms returns strings that every file with a matching line holds,
// for an index to look up: the literal parts of the query that every
// match contains, each of at least three characters, and whether they
// are to be found ignoring case (some part of the query ignores case).
// Then a term holds only ASCII characters other than the letters k and s
// (each of which (?i) also matches outside ASCII: K is the Kelvin sign, ſ
// the long s), so that an ASCII case-insensitive search finds it. No
// terms means an index cannot narrow the search.
func indexTerms(re *syntax.Regexp) (terms []string, foldCase bool) {
	var lits []string
	var collect func(re *syntax.Regexp)
	collect = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			foldCase = foldCase || re.Flags&syntax.FoldCase != 0
			lits = append(lits, string(re.Rune))
		case syntax.OpConcat:
			// Adjacent literals are one run of text in every match.
			var run []rune
			flush := func() {
				if len(run) > 0 {
					lits = append(lits, string(run))
					run = nil
				}
			}
			for _, sub := range re.Sub {
				if sub.Op == syntax.OpLiteral {
					foldCase = foldCase || sub.Flags&syntax.FoldCase != 0
					run = append(run, sub.Rune...)
					continue
				}
				flush()
				collect(sub)
			}
			flush()
		case syntax.OpCapture, syntax.OpPlus:
			collect(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min > 0 {
				collect(re.Sub[0])
			}
		}
	}
	collect(re)
	for _, lit := range lits {
		pieces := []string{lit}
		if foldCase {
			pieces = strings.FieldsFunc(lit, func(r rune) bool {
				return r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S'
			})
		}
		for _, p := range pieces {
			// A line holds no newline, and an invalid sequence in a file
			// reads as U+FFFD: neither is found in a file as it is.
			if utf8.RuneCountInString(p) >= 3 && !strings.ContainsAny(p, "\n\uFFFD") && !slices.Contains(terms, p) {
				terms = append(terms, p)
			}
		}
	}
	return terms, foldCase
}
