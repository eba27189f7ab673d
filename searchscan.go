package memtool

// This file is how a search reads: the lines of one file, and the scan of
// a store without an index.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"
)

// searchReadKey marks the context of the reads a search makes.
type searchReadKey struct{}

// WithSearchRead returns ctx marked as that of a search's reads (see
// IsSearchRead). Search marks its own; a store that reads through
// another process (a remote store's server) passes the mark on with its
// read, so that the policies there see it.
func WithSearchRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, searchReadKey{}, true)
}

// IsSearchRead reports whether ctx is that of a read Search makes to look
// for matching lines, not a read the model or its people asked for: a
// policy that records the use of files (expiry) does not count it, so
// that searching a memory does not keep every file in it alive.
func IsSearchRead(ctx context.Context) bool {
	v, _ := ctx.Value(searchReadKey{}).(bool)
	return v
}

// file adds the matching lines of the file name, whose content is data,
// unless memtool cannot show it as text. It stops, adding none, when ctx
// ends: a costly regular expression on a large file would otherwise run
// on past the deadline of the search (the caller returns ctx's error).
func (sr *search) file(ctx context.Context, name string, data []byte) {
	if int64(len(data)) > sr.readLimit || bytes.IndexByte(data, 0) >= 0 || imageType(name, data) != "" ||
		bytes.Count(data, newline)+1 > MaxLines {
		return
	}
	if !sr.mayMatch(data) {
		return
	}
	// Of a file's matching lines, the first limit are all that may be
	// among the search's first limit: the others are only counted.
	var found []SearchMatch
	count := 0
	p := VirtualPath(name)
	done := ctx.Done()
	for n := 1; ; n++ {
		select {
		case <-done:
			return
		default:
		}
		line, rest, more := bytes.Cut(data, newline)
		text := decodeLossy(line)
		matched := false
		if sr.re != nil && (len(text) > longLine || len(text) > matchSteps/sr.steps) {
			matched = matchLong(ctx, sr.re, text, max(1, min(4096, matchSteps/sr.steps)))
			if ctx.Err() != nil {
				return
			}
		} else {
			matched = sr.match(text)
		}
		if matched {
			if count++; len(found) < sr.limit {
				found = append(found, SearchMatch{Path: p, Line: n, Text: text})
			}
		}
		if !more {
			break
		}
		data = rest
	}
	if count > 0 {
		sr.add(found, count)
	}
}

// A regular expression costs up to the size of its program per character
// (a query of 1,000 bytes can compile to 100,000 steps): a line of 4 KiB
// may take seconds to match, one of 300,000 characters an hour. A line is matched by matchLong, which looks at ctx every so many
// characters, when it is longer than longLine bytes or its match may cost
// more than matchSteps steps; it looks at ctx at least every matchSteps
// steps (every 4,096 characters for a cheap query).
const (
	longLine   = 4 << 10
	matchSteps = 1 << 20
)

// matchLong reports whether re matches line, reading it through a reader
// that ends the line early once ctx ends, so that the match stops there
// (the caller then looks at ctx, not at the answer). It looks at ctx
// every every characters.
func matchLong(ctx context.Context, re *regexp.Regexp, line string, every int) bool {
	return re.MatchReader(&ctxRuneReader{ctx: ctx, r: strings.NewReader(line), every: every})
}

// ctxRuneReader reads r's runes until ctx ends, then reports the end of
// the text; it looks at ctx every every runes.
type ctxRuneReader struct {
	ctx   context.Context
	r     *strings.Reader
	n     int
	every int
}

func (c *ctxRuneReader) ReadRune() (rune, int, error) {
	if c.n++; c.n%c.every == 0 && c.ctx.Err() != nil {
		return 0, 0, io.EOF
	}
	return c.r.ReadRune()
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
// its letters in either case, in time linear in len(data): it jumps from
// one place holding t's first letter (in either case) to the next, each
// found once; if those places fail to begin t so often that comparing
// them costs more than the bytes passed over, it goes on with a rolling
// hash of the text folded to lower case.
func containsFoldASCII(data []byte, t string) bool {
	first := t[0]
	other := first ^ 0x20
	if !isASCIILetter(first) {
		other = first
	}
	// nextFirst and nextOther are where first and other are next found at
	// or after i, len(data) if nowhere; -1 until looked for.
	nextFirst, nextOther, cost := -1, -1, 0
	for i := 0; ; {
		if nextFirst < i {
			nextFirst = indexFrom(data, i, first)
		}
		if nextOther < i {
			nextOther = indexFrom(data, i, other)
		}
		j := min(nextFirst, nextOther)
		if j+len(t) > len(data) {
			return false
		}
		if equalFoldASCII(data[j:j+len(t)], t) {
			return true
		}
		i = j + 1
		if cost += len(t); cost > i+64 {
			return indexFoldHash(data[i:], t)
		}
	}
}

// indexFrom returns the index of the first c in data at or after i, or
// len(data) if there is none.
func indexFrom(data []byte, i int, c byte) int {
	if k := bytes.IndexByte(data[i:], c); k >= 0 {
		return i + k
	}
	return len(data)
}

// indexFoldHash reports whether data holds t, ASCII letters in either
// case, by a Rabin-Karp rolling hash of the bytes folded to lower case.
func indexFoldHash(data []byte, t string) bool {
	const prime = 16777619
	n := len(t)
	if n > len(data) {
		return false
	}
	var want, h, pow uint32 = 0, 0, 1
	for i := range n {
		want = want*prime + uint32(lowerASCII(t[i]))
		h = h*prime + uint32(lowerASCII(data[i]))
		pow *= prime
	}
	for i := n; ; i++ {
		if h == want && equalFoldASCII(data[i-n:i], t) {
			return true
		}
		if i == len(data) {
			return false
		}
		h = h*prime + uint32(lowerASCII(data[i])) - pow*uint32(lowerASCII(data[i-n]))
	}
}

func lowerASCII(c byte) byte {
	if isASCIILetter(c) {
		return c | 0x20
	}
	return c
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

// scan walks the tree below the directory name, one directory at a time,
// while searchReaders goroutines read and search its files.
func (sr *search) scan(ctx context.Context, s Store, name string) error {
	ctx, cancel := context.WithCancelCause(WithSearchRead(ctx))
	defer cancel(nil)
	files := make(chan string)
	var wg sync.WaitGroup
	for range searchReaders {
		wg.Go(func() {
			for f := range files {
				data, err := s.ReadFile(ctx, f, sr.readLimit)
				switch {
				case err == nil:
					sr.file(ctx, f, data)
				case errors.Is(err, ErrNotExist), errors.Is(err, ErrTooLarge), errors.Is(err, ErrIsDir), errors.Is(err, ErrIrregular):
					// Gone or changed meanwhile, or not text: skipped.
				case unreadable(err):
					sr.skip(f)
				default:
					cancel(err)
				}
			}
		})
	}
	root := ResolveName(ctx, s, name)
	w := &scanWalk{s: s, root: root, limit: sr.readLimit, files: files, walked: map[string]bool{root: true}}
	err := w.walk(ctx, name, root)
	close(files)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause // a reader failed, or ctx ended
	}
	return err
}

// A scanWalk sends the name of every visible file below root to files,
// each directory once: a directory reached through a symbolic link (a
// Resolver resolves it to another name) is not walked if it was walked
// already, or if it lies visible in the tree searched, where it is
// searched under its own name. So a link to an ancestor, or two links to
// one directory, neither repeat its files nor walk round until the link
// limit, once more for every link at every level.
type scanWalk struct {
	s      Store
	root   string // the tree searched, resolved
	limit  int64  // the largest file sent
	files  chan<- string
	walked map[string]bool // the directories walked, resolved
}

func (w *scanWalk) walk(ctx context.Context, dir, real string) error {
	infos, err := w.s.ReadDir(ctx, dir)
	if err != nil {
		if errors.Is(err, ErrNotExist) || errors.Is(err, ErrNotDir) {
			return nil // removed while we searched
		}
		return err
	}
	for _, fi := range infos {
		if !visible(fi.Name) {
			continue // hidden, or a name no answer may show (see showable)
		}
		name := path.Join(dir, fi.Name)
		switch {
		case fi.IsDir():
			sub := path.Join(real, fi.Name)
			if to := ResolveName(ctx, w.s, name); to != sub { // a link
				if to == w.root || isBelow(to, w.root) && !hiddenBelow(w.root, to) {
					continue
				}
				sub = to
			}
			if w.walked[sub] {
				continue
			}
			w.walked[sub] = true
			if err := w.walk(ctx, name, sub); err != nil {
				return err
			}
		case fi.IsRegular() && fi.Size <= w.limit:
			select {
			case w.files <- name:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}
