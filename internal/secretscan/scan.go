// Package secretscan finds secrets (keys, tokens, private keys, passwords
// in URLs, card numbers) in a text. It is shared by the policies that must
// not let one through: secrets, which refuses or redacts a write, and
// audit, which cuts them out of the paths it logs; package secrets
// documents the kinds it finds.
//
// There is no allow marker: nothing written into a text turns a rule off.
// A URL password of asterisks alone is taken as masked; one that starts
// like this package's own "[REDACTED kind]" is not (the replacement holds a
// blank, which a URL password cannot, so redacted text never matches).
//
// A private key runs from its -----BEGIN … PRIVATE KEY----- header to its
// END line. A header with no END line after it, or with a line that no
// key holds (another -----BEGIN, prose) before it, is open (Finding.Open):
// its span is the header's line alone, never the rest of the text, so
// redacting it destroys no other line; the secrets policy refuses such a
// text under either policy rather than keep what may be the key's body.
//
// Redact reaches a fixed point: what it returns holds nothing Scan finds
// (or it returns nothing). Scan's time, and Redact's per pass, grows
// linearly with the text, whatever it holds: each rule looks at a bounded
// window at its anchor, and the runs and searches that may go further (a
// JWT's parts, a key's END line) are walked once however many anchors ask.
package secretscan

import (
	"bytes"
	"slices"
	"strings"
)

// A Finding is one secret in a text.
type Finding struct {
	Kind       string // what it is, for people: "an AWS access key", …
	Line       int    // 1-based line of its first byte
	Start, End int    // its byte span in the text
	// Open marks a private key whose extent cannot be told: its header
	// has no END line after it, or lines that no key holds (another
	// -----BEGIN, prose) come first. Its span is the header's line alone, so a
	// redaction keeps the text after it; but the key's body, if any,
	// follows unredacted. The secrets policy refuses such a text.
	Open bool
}

// anchorIndex finds every anchor of every rule in one pass over a text:
// a bitmap of hashed three-byte prefixes rules out most positions with one
// lookup, and the anchors that start with the byte there are compared only
// where it hits.
var anchorIndex = func() (ix struct {
	tri     [1 << 16 / 64]uint64
	byFirst [256][]anchor
}) {
	for i := range rules {
		rules[i].id = i
		for _, a := range rules[i].anchors {
			cases := func(c byte) []byte { return []byte{c} }
			if rules[i].fold {
				cases = func(c byte) []byte {
					lo, up := bytes.ToLower([]byte{c}), bytes.ToUpper([]byte{c})
					if lo[0] == up[0] {
						return lo
					}
					return []byte{lo[0], up[0]}
				}
			}
			for _, c0 := range cases(a[0]) {
				for _, c1 := range cases(a[1]) {
					for _, c2 := range cases(a[2]) {
						h := triHash(c0, c1, c2)
						ix.tri[h/64] |= 1 << (h % 64)
					}
				}
				ix.byFirst[c0] = append(ix.byFirst[c0], anchor{a, &rules[i], inRun(&rules[i], a)})
			}
		}
	}
	return ix
}()

// An anchor is a rule's literal: where the text holds it (in any case if
// the rule folds case), the rule is tried.
type anchor struct {
	lit  string
	rule *rule
	// inRun: the rule has a run and every byte of lit is of it, so an
	// anchor inside a run the rule already took whole starts no other
	// secret (see rule.match).
	inRun bool
}

func inRun(r *rule, lit string) bool {
	if r.run == nil {
		return false
	}
	for i := range len(lit) {
		if !r.run(lit[i]) {
			return false
		}
	}
	return true
}

// at reports whether the text at i starts with the anchor.
func (a anchor) at(text []byte, i int) bool {
	if a.rule.fold {
		return len(text)-i >= len(a.lit) && bytes.EqualFold(text[i:i+len(a.lit)], []byte(a.lit))
	}
	return bytes.HasPrefix(text[i:], []byte(a.lit))
}

func triHash(a, b, c byte) uint32 { return (uint32(a)<<10 ^ uint32(b)<<5 ^ uint32(c)) & 0xffff }

// Scan returns the secrets in text, ordered by position. Overlapping
// findings are merged into the first. A secret right after another one
// stands alone, as it will once the first is redacted: a token glued to
// the end of a Stripe key as long as its rule matches is found too.
func Scan(text []byte) []Finding {
	found, _ := scan(text)
	return found
}

// scan is Scan, also returning the work it did: the bytes it handed to
// regular expressions or stepped over, beyond its one pass over the text.
// It grows with the text's length alone, whatever the text holds.
func scan(text []byte) ([]Finding, int) {
	s := &scanner{text: text, runs: make([]runCache, len(rules)), covered: make([]int, len(rules)),
		openAIMarker: cursor{lit: openAIMarker}, keyMarker: cursor{lit: "PRIVATE KEY"}, newline: cursor{lit: "\n"}}
	var found []Finding
	for i := 0; i+3 <= len(text); i++ {
		h := triHash(text[i], text[i+1], text[i+2])
		if anchorIndex.tri[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, a := range anchorIndex.byFirst[text[i]] {
			if !a.at(text, i) {
				continue
			}
			if f, ok := a.rule.match(s, i, a.inRun); ok {
				found = append(found, f)
				s.markEnd(f.End)
			}
		}
	}
	found = append(found, cards(s)...)
	return ordered(text, found), s.work
}

// ordered sorts the findings of text by where they start, merges those
// that overlap and numbers their lines; nil if there are none.
func ordered(text []byte, found []Finding) []Finding {
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b Finding) int { return a.Start - b.Start })
	found = merge(found)
	line, pos := 1, 0
	for i := range found {
		line += bytes.Count(text[pos:found[i].Start], []byte("\n"))
		pos = found[i].Start
		found[i].Line = line
	}
	return found
}

// merge merges overlapping findings, sorted by start, into the first.
func merge(found []Finding) []Finding {
	merged := found[:1]
	for _, f := range found[1:] {
		last := &merged[len(merged)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			last.Open = last.Open || f.Open
			continue
		}
		merged = append(merged, f)
	}
	return merged
}

// A scanner holds a text being scanned, the work done on it, and the
// caches that let each run of bytes, and the text between a search's
// start and what it finds, be walked once however many anchors ask.
type scanner struct {
	text    []byte
	work    int
	ends    map[int]bool // see markEnd
	runs    []runCache   // a rule's run (see rule.run), by rule.id
	covered []int        // the end of a rule's last finding, by rule.id (rules with a run)

	openAIRun, jwtHeader, jwtClaims, jwtSignature, keyLabel runCache
	openAIMarker, keyMarker, newline                        cursor
	keyEnds                                                 cursor // private key END lines
	keyStop                                                 int    // the end of keyEnds' line
	keyBodyBad                                              cursor // see badLine
}

// markEnd records that a secret ends at i: what starts there, or after a
// dash there, does not continue it (see ended).
func (s *scanner) markEnd(i int) {
	if s.ends == nil {
		s.ends = map[int]bool{}
	}
	s.ends[i] = true
}

// ended reports whether a secret ends at i, so that a secret at i (or a
// card number after a dash at i) stands alone, as it will once the first
// is redacted.
func (s *scanner) ended(i int) bool { return s.ends[i] }

// A runCache remembers the run of bytes it last walked: [start, end).
type runCache struct {
	valid      bool
	start, end int
}

// runEnd returns the end of the run of bytes in class that holds i (or
// starts there). Asked at growing positions, a cache walks each byte once.
func (s *scanner) runEnd(c *runCache, class func(byte) bool, i int) int {
	if c.valid && i >= c.start && i < c.end {
		return c.end
	}
	j := i
	for j < len(s.text) && class(s.text[j]) {
		if c.valid && j == c.start && c.end > c.start {
			j = c.end // the run goes on as walked before
			break
		}
		j++
	}
	s.work += j - i + 1
	c.valid, c.start, c.end = true, i, j
	return j
}

// A cursor remembers where its literal next occurs after a position: at
// is its first occurrence at or after from, or -1.
type cursor struct {
	lit      string
	valid    bool
	from, at int
}

// next returns the first position at or after q where c's literal
// occurs, or -1. Asked at growing positions, a cursor searches each byte
// once.
func (s *scanner) next(c *cursor, q int) int {
	if c.valid && q >= c.from && (c.at < 0 || c.at >= q) {
		return c.at
	}
	c.valid, c.from, c.at = true, q, -1
	if q > len(s.text) {
		return -1
	}
	i := bytes.Index(s.text[q:], []byte(c.lit))
	if i < 0 {
		s.work += len(s.text) - q
	} else {
		s.work += i + len(c.lit)
		c.at = q + i
	}
	return c.at
}

// keyEnd returns the span of the first private key END line at or after
// q, or -1, -1.
func (s *scanner) keyEnd(q int) (start, end int) {
	c := &s.keyEnds
	if !(c.valid && q >= c.from && (c.at < 0 || c.at >= q)) {
		c.valid, c.from, c.at = true, q, -1
		for p := q; ; p += 8 {
			i := bytes.Index(s.text[p:], []byte("-----END"))
			if i < 0 {
				s.work += len(s.text) - p
				break
			}
			p += i
			w := s.text[p:min(len(s.text), p+keyEnd.max)]
			s.work += i + len(w)
			if loc := keyEnd.regexp().FindIndex(w); loc != nil {
				c.at, s.keyStop = p, p+loc[1]
				break
			}
		}
	}
	if c.at < 0 {
		return -1, -1
	}
	return c.at, s.keyStop
}

// find runs r's pattern at start, on its window, and returns the end of
// the match or -1.
func (s *scanner) find(r *rule, start int) int {
	w := s.text[start:min(len(s.text), start+r.max)]
	s.work += len(w)
	loc := r.regexp().FindIndex(w)
	if loc == nil {
		return -1
	}
	return start + loc[1]
}

// maxPasses bounds Redact's passes. A pass finds more only where a
// redaction lets a fixed-length token before it end (one that was
// followed by a letter, digit or its other bytes: the first secret).
const maxPasses = 16

// Redact returns text with each of its findings (from Scan) replaced by
// "[REDACTED kind]", the kind without its article. A replacement holds no
// secret (and no anchor), but it changes what is next to it: a token that
// was followed by the start of a secret, and so did not end where it must,
// ends at the replacement. So Redact scans what it made and redacts again
// until it finds nothing. It reports false, and no text, if a secret is
// still left after maxPasses passes (a chain of such tokens): the caller
// must then not use the text at all. Each pass costs a scan.
func Redact(text []byte, findings []Finding) ([]byte, bool) {
	for range maxPasses {
		text = replace(text, findings)
		if findings = Scan(text); findings == nil {
			return text, true
		}
	}
	return nil, false
}

// replace replaces each finding in text.
func replace(text []byte, findings []Finding) []byte {
	out := make([]byte, 0, len(text))
	pos := 0
	for _, f := range findings {
		out = append(out, text[pos:f.Start]...)
		out = append(out, "[REDACTED "+strings.TrimPrefix(strings.TrimPrefix(f.Kind, "an "), "a ")+"]"...)
		pos = f.End
	}
	return append(out, text[pos:]...)
}
