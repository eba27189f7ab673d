package memtool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
//     may name one, as view may. So are names a listing leaves out as no
//     answer may show them (a line break, a control or bidi character,
//     bytes not UTF-8: the path gate refuses them, but a program that
//     writes the store directly may not).
//   - Only files memtool can show as text are searched: not images (the
//     files view answers with an image block), not binary files (holding
//     a NUL byte), not files larger than the read limit or with more lines
//     than MaxLines.
//   - Lines are numbered as view numbers them: a file that ends with a
//     newline has an empty last line. A line's text is decoded as view
//     decodes it (an invalid UTF-8 sequence reads as U+FFFD), and matched
//     as decoded.
//   - A file the store refuses to give, with a reason for the model (a
//     Refusal: in an encrypted store, a file that does not open, being
//     under a key that is not configured, damaged or unencrypted), is
//     passed over, counted and named in the result (Unreadable), never
//     quoted; the search answers the lines of the other files. Any other
//     failure of the store (it is unreachable or busy, the search is
//     cancelled) fails the search: one bad file does not hide every other
//     memory from search, and a broken store does not pass for an empty
//     one.

// Limits of a search.
const (
	// MaxSearchQuery is the longest query, in bytes.
	MaxSearchQuery = 1000
	// DefaultSearchLimit is the number of lines a search returns when its
	// Limit is 0.
	DefaultSearchLimit = 100
	// MaxSearchLimit is the most lines a search returns.
	MaxSearchLimit = 10000
	// MaxUnreadablePaths is the most files that could not be read a
	// search names (SearchResult.UnreadablePaths); it counts them all.
	MaxUnreadablePaths = 20
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
	// Unreadable is the number of files the search could not read, so
	// that their lines are in neither Matches nor Total: files the store
	// refused to give with a reason for the model (a Refusal), such as a
	// file of an encrypted store that does not open (written under a key
	// that is not configured, damaged, or written unencrypted).
	Unreadable int
	// UnreadablePaths are the first MaxUnreadablePaths of those files, in
	// path order, as the model names them.
	UnreadablePaths []string
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
// not exist is one too. Other errors are the store's. Files that could
// not be read are in the result, not an error (see SearchResult.Unreadable).
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
		return SearchResult{}, searchErrorf(missingPath, p)
	case errors.Is(err, ErrEscapes):
		// Refused as view refuses it: no retry will reach it.
		return SearchResult{}, searchErrorf("Path would escape %s directory via symlink", Root)
	case err != nil:
		return SearchResult{}, err
	case fi.IsRegular() && wantDir:
		return SearchResult{}, searchErrorf("The path %s is not a directory", p)
	case fi.IsRegular():
		if err := sr.one(ctx, s, name); err != nil {
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
	re        *regexp.Regexp // what match runs, unless the query is a plain literal
	steps     int            // re's program size: its cost per character, at most
	terms     []string       // what every matching file holds (see indexTerms)
	foldCase  bool
	limit     int
	readLimit int64

	mu         sync.Mutex
	matches    []SearchMatch // the first limit matching lines, and maybe as many more
	total      int           // the number of matching lines
	unreadable []string      // the first MaxUnreadablePaths files not read, and maybe as many more
	skipped    int           // the number of files not read
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
		// Say what is wrong with the query as it was given, not with the
		// (?i) put before it.
		if _, own := regexp.Compile(q.Query); own != nil {
			err = own
		}
		return nil, searchErrorf("The search query is not a valid regular expression: %v", err)
	}
	if !q.Regex && q.CaseSensitive {
		lit := q.Query
		sr.match = func(line string) bool { return strings.Contains(line, lit) }
	} else {
		sr.match, sr.re = re.MatchString, re
	}
	// regexp.Compile parsed expr the same way.
	parsed, _ := syntax.Parse(expr, syntax.Perl)
	sr.terms, sr.foldCase = indexTerms(parsed)
	if sr.re != nil {
		sr.steps = 1
		if prog, err := syntax.Compile(parsed.Simplify()); err == nil {
			sr.steps = max(1, len(prog.Inst))
		}
	}
	return sr, nil
}

// one searches the file name.
func (sr *search) one(ctx context.Context, s Store, name string) error {
	data, err := s.ReadFile(WithSearchRead(ctx), name, sr.readLimit)
	switch {
	case err == nil:
		sr.file(ctx, name, data)
		return ctx.Err()
	case unreadable(err):
		sr.skip(name)
	case !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrNotExist):
		return err
	}
	return nil
}

// unreadable reports whether err, the failure of a read of one file,
// says that this file cannot be read while the store works: the store or
// a policy refused the file with a reason for the model (a Refusal), as
// an encrypted store refuses a file that does not open, and as a remote
// store passes such a refusal on. A search passes over such a file and
// names it (skip), so that one bad file does not hide every other memory
// from search. A busy store is not about one file, and fails the search.
func unreadable(err error) bool {
	var ref Refusal
	return errors.As(err, &ref) && !errors.Is(err, ErrBusy)
}

// skip records the file name as one the search could not read, keeping
// the names of no more than twice MaxUnreadablePaths of them, as add
// keeps matches.
func (sr *search) skip(name string) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.skipped++
	sr.unreadable = append(sr.unreadable, VirtualPath(name))
	if len(sr.unreadable) > 2*MaxUnreadablePaths {
		sr.keepUnreadable()
	}
}

// keepUnreadable sorts the names of the files not read and keeps the
// first MaxUnreadablePaths of them.
func (sr *search) keepUnreadable() {
	slices.Sort(sr.unreadable)
	sr.unreadable = slices.Clip(sr.unreadable[:min(len(sr.unreadable), MaxUnreadablePaths)])
}

// add adds found, some of a file's count matching lines, and keeps no
// more than twice limit of all the lines found: a search holds what it
// returns, not every matching line of the memory.
func (sr *search) add(found []SearchMatch, count int) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	sr.total += count
	sr.matches = append(sr.matches, found...)
	if len(sr.matches) > 2*sr.limit {
		sr.keep()
	}
}

// keep sorts the matches and keeps the first limit of them.
func (sr *search) keep() {
	slices.SortFunc(sr.matches, func(a, b SearchMatch) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	clear(sr.matches[min(len(sr.matches), sr.limit):])
	sr.matches = sr.matches[:min(len(sr.matches), sr.limit)]
}

// result returns the first limit matches, and their total, and the
// files not read.
func (sr *search) result() SearchResult {
	sr.keep()
	sr.keepUnreadable()
	return SearchResult{Matches: slices.Clip(sr.matches), Total: sr.total, Unreadable: sr.skipped, UnreadablePaths: sr.unreadable}
}

// MaxViewChars returns the longest view m answers, in characters
// (Options.MaxViewChars): a tool that shows search results to the model
// caps them alike.
func (m *Memory) MaxViewChars() int { return m.opts.MaxViewChars }
