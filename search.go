package memtool

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Search finds the lines of a memory that match a query, as grep -rn does,
// on any Store: with an index where the store has one (Searcher), by a
// bounded parallel scan otherwise. Both give the same lines.
//
// What a search sees is what the model can see with view:
//
//   - Entries hidden from listings (a name starting with "." and
//     node_modules) are skipped below the path searched; the path itself
//     may name one, as view may.
//   - Only files memtool can show as text are searched: not images (the
//     files view answers with an image block), not binary files (holding
//     a NUL byte), not files larger than the read limit or with more lines
//     than MaxLines.
//   - Lines are numbered as view numbers them: a file that ends with a
//     newline has an empty last line. A line's text is decoded as view
//     decodes it (an invalid UTF-8 sequence reads as U+FFFD), and matched
//     as decoded.

// Limits of a search.
const (
	// MaxSearchQuery is the longest query, in bytes.
	MaxSearchQuery = 1000
	// DefaultSearchLimit is the number of lines a search returns when its
	// Limit is 0.
	DefaultSearchLimit = 100
	// MaxSearchLimit is the most lines a search returns.
	MaxSearchLimit = 10000
	// searchReaders is how many files a scan reads at once.
	searchReaders = 8
)

// A SearchQuery says what to search for, and where.
type SearchQuery struct {
	// Query is the text to find in a line: a literal string, or with
	// Regex a regular expression in Go's RE2 syntax, matched against each
	// line on its own. It is not empty, is valid UTF-8 and holds at most
	// MaxSearchQuery bytes.
	Query string
	// Regex makes Query a regular expression.
	Regex bool
	// CaseSensitive matches letters only in the case Query gives; without
	// it, case is ignored (Unicode simple case folding, as (?i) does).
	CaseSensitive bool
	// Path is the directory (everything below it) or the file to search,
	// as the model names it: "/memories/…". "" means /memories.
	Path string
	// Limit is the most matching lines returned (Total counts them all):
	// 0 means DefaultSearchLimit; more than MaxSearchLimit is refused.
	Limit int
}

// A SearchMatch is one matching line.
type SearchMatch struct {
	// Path is the file as the model names it: "/memories/…".
	Path string
	// Line is the line's number, from 1, as view numbers it.
	Line int
	// Text is the line without its newline, decoded as view decodes it.
	Text string
}

// A SearchResult is the answer to a search.
type SearchResult struct {
	// Matches are the first Limit matching lines, in path order (byte
	// order of Path) and line order within a file.
	Matches []SearchMatch
	// Total is the number of matching lines, of which Matches are the
	// first.
	Total int
}

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

// A SearchError is a query Search refuses: its message says why, in words
// for the person or model that wrote it.
type SearchError struct{ Reason string }

func (e *SearchError) Error() string { return e.Reason }

func searchErrorf(format string, args ...any) error {
	return &SearchError{fmt.Sprintf(format, args...)}
}

// Search runs q on the memory in s, reading files of at most m's read
// limit. A query or path it refuses is a *SearchError; a path that does
// not exist is one too. Other errors are the store's.
func (m *Memory) Search(ctx context.Context, q SearchQuery) (SearchResult, error) {
	return Search(ctx, m.store, q, m.opts.MaxReadSize)
}

// Search runs q on the memory in s, reading files of at most readLimit
// bytes (DefaultMaxReadSize if 0 or less). See Memory.Search.
func Search(ctx context.Context, s Store, q SearchQuery, readLimit int64) (SearchResult, error) {
	if readLimit <= 0 {
		readLimit = DefaultMaxReadSize
	}
	sr, err := newSearch(q, readLimit)
	if err != nil {
		return SearchResult{}, err
	}
	p := cmp.Or(q.Path, Root)
	name, wantDir, err := CleanPath(p)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			return SearchResult{}, &SearchError{pe.Reason}
		}
		return SearchResult{}, err
	}
	fi, err := s.Stat(ctx, name)
	switch {
	case errors.Is(err, ErrNotExist):
		return SearchResult{}, searchErrorf("The path %s does not exist. Please provide a valid path.", p)
	case err != nil:
		return SearchResult{}, err
	case fi.IsRegular() && wantDir:
		return SearchResult{}, searchErrorf("The path %s is not a directory", p)
	case fi.IsRegular():
		data, err := s.ReadFile(ctx, name, readLimit)
		if err == nil {
			sr.file(name, data)
		} else if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrNotExist) {
			return SearchResult{}, err
		}
	case fi.IsDir():
		if err := sr.dir(ctx, s, name); err != nil {
			return SearchResult{}, err
		}
	default:
		return SearchResult{}, searchErrorf("Unsupported file type for %s", p)
	}
	return sr.result(), nil
}

// A search is one run of Search: the compiled query and the matches so
// far. Its methods are safe for concurrent use.
type search struct {
	match     func(line string) bool
	terms     []string // what every matching file holds (see indexTerms)
	foldCase  bool
	limit     int
	readLimit int64

	mu      sync.Mutex
	matches []SearchMatch
}

func newSearch(q SearchQuery, readLimit int64) (*search, error) {
	switch {
	case q.Query == "":
		return nil, searchErrorf("The search query is empty")
	case len(q.Query) > MaxSearchQuery:
		return nil, searchErrorf("The search query is too long: %d bytes, more than the limit of %d bytes", len(q.Query), MaxSearchQuery)
	case !utf8.ValidString(q.Query):
		return nil, searchErrorf("The search query is not valid UTF-8")
	case q.Limit < 0 || q.Limit > MaxSearchLimit:
		return nil, searchErrorf("The search limit %d is out of range: it must be 1 to %d (0 means %d)", q.Limit, MaxSearchLimit, DefaultSearchLimit)
	}
	sr := &search{limit: cmp.Or(q.Limit, DefaultSearchLimit), readLimit: readLimit}
	expr := q.Query
	if !q.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !q.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, searchErrorf("The search query is not a valid regular expression: %v", err)
	}
	if !q.Regex && q.CaseSensitive {
		lit := q.Query
		sr.match = func(line string) bool { return strings.Contains(line, lit) }
	} else {
		sr.match = re.MatchString
	}
	// regexp.Compile parsed expr the same way.
	parsed, _ := syntax.Parse(expr, syntax.Perl)
	sr.terms, sr.foldCase = indexTerms(parsed)
	return sr, nil
}

// file adds the matching lines of the file name, whose content is data,
// unless memtool cannot show it as text.
func (sr *search) file(name string, data []byte) {
	if int64(len(data)) > sr.readLimit || bytes.IndexByte(data, 0) >= 0 || imageType(name, data) != "" ||
		bytes.Count(data, newline)+1 > MaxLines {
		return
	}
	if !sr.mayMatch(data) {
		return
	}
	var found []SearchMatch
	p := VirtualPath(name)
	for n := 1; ; n++ {
		line, rest, more := bytes.Cut(data, newline)
		text := decodeLossy(line)
		if sr.match(text) {
			found = append(found, SearchMatch{Path: p, Line: n, Text: text})
		}
		if !more {
			break
		}
		data = rest
	}
	if len(found) > 0 {
		sr.mu.Lock()
		sr.matches = append(sr.matches, found...)
		sr.mu.Unlock()
	}
}

// mayMatch reports whether data holds every term, which any file with a
// matching line does: most files are passed over without splitting them
// into lines.
func (sr *search) mayMatch(data []byte) bool {
	for _, t := range sr.terms {
		if sr.foldCase {
			if !containsFoldASCII(data, t) {
				return false
			}
		} else if !bytes.Contains(data, []byte(t)) {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether data holds t, an ASCII string, with
// its letters in either case.
func containsFoldASCII(data []byte, t string) bool {
	first := t[0]
	other := first ^ 0x20
	if !isASCIILetter(first) {
		other = first
	}
	for i := 0; i+len(t) <= len(data); i++ {
		c := data[i]
		if c != first && c != other {
			j := bytes.IndexByte(data[i:], first)
			if other != first {
				if k := bytes.IndexByte(data[i:], other); k >= 0 && (j < 0 || k < j) {
					j = k
				}
			}
			if j < 0 {
				return false
			}
			i += j
			if i+len(t) > len(data) {
				return false
			}
		}
		if equalFoldASCII(data[i:i+len(t)], t) {
			return true
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func equalFoldASCII(b []byte, t string) bool {
	for i := range len(t) {
		c, d := b[i], t[i]
		if c != d && !(isASCIILetter(c) && c^0x20 == d) {
			return false
		}
	}
	return true
}

// dir searches every file below the directory name: with the store's
// index if it has one, else by a scan.
func (sr *search) dir(ctx context.Context, s Store, name string) error {
	if len(sr.terms) > 0 && Has[Searcher](s) {
		err := s.(Searcher).SearchFiles(ctx, name, IndexQuery{Terms: sr.terms, FoldCase: sr.foldCase, Limit: sr.readLimit},
			func(fname string, data []byte) error {
				if !hiddenBelow(name, fname) {
					sr.file(fname, data)
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
// is or lies in an entry hidden from listings.
func hiddenBelow(dir, name string) bool {
	rel := name
	if dir != "" {
		rel = strings.TrimPrefix(name, dir+"/")
	}
	for c := range strings.SplitSeq(rel, "/") {
		if hiddenName(c) {
			return true
		}
	}
	return false
}

// hiddenName reports whether a listing leaves the entry out.
func hiddenName(name string) bool { return strings.HasPrefix(name, ".") || name == "node_modules" }

// scan walks the tree below the directory name, one directory at a time,
// while searchReaders goroutines read and search its files.
func (sr *search) scan(ctx context.Context, s Store, name string) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	files := make(chan string)
	var wg sync.WaitGroup
	for range searchReaders {
		wg.Go(func() {
			for f := range files {
				data, err := s.ReadFile(ctx, f, sr.readLimit)
				switch {
				case err == nil:
					sr.file(f, data)
				case errors.Is(err, ErrNotExist), errors.Is(err, ErrTooLarge), errors.Is(err, ErrIsDir), errors.Is(err, ErrIrregular):
					// Gone or changed meanwhile, or not text: skipped.
				default:
					cancel(err)
				}
			}
		})
	}
	err := sr.walk(ctx, s, name, files)
	close(files)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause // a reader failed, or ctx ended
	}
	return err
}

// walk sends the name of every visible file below dir to files.
func (sr *search) walk(ctx context.Context, s Store, dir string, files chan<- string) error {
	infos, err := s.ReadDir(ctx, dir)
	if err != nil {
		if errors.Is(err, ErrNotExist) || errors.Is(err, ErrNotDir) {
			return nil // removed while we searched
		}
		return err
	}
	for _, fi := range infos {
		if hiddenName(fi.Name) {
			continue
		}
		name := path.Join(dir, fi.Name)
		switch {
		case fi.IsDir():
			if err := sr.walk(ctx, s, name, files); err != nil {
				return err
			}
		case fi.IsRegular() && fi.Size <= sr.readLimit:
			select {
			case files <- name:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// result sorts the matches and keeps the first limit of them.
func (sr *search) result() SearchResult {
	slices.SortFunc(sr.matches, func(a, b SearchMatch) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return SearchResult{Matches: slices.Clip(sr.matches[:min(len(sr.matches), sr.limit)]), Total: len(sr.matches)}
}

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

// MaxViewChars returns the longest view m answers, in characters
// (Options.MaxViewChars): a tool that shows search results to the model
// caps them alike.
func (m *Memory) MaxViewChars() int { return m.opts.MaxViewChars }
