// Package secretscan finds secrets (keys, tokens, private keys, passwords
// in URLs, card numbers) in a text. It is shared by the policies that must
// not let one through: secrets, which refuses or redacts a write, and
// audit, which cuts them out of the paths it logs; package secrets
// documents the kinds it finds.
package secretscan

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A Finding is one secret in a text.
type Finding struct {
	Kind       string // what it is, for people: "an AWS access key", …
	Line       int    // 1-based line of its first byte
	Start, End int    // its byte span in the text
}

// A rule finds one kind of secret. Each rule starts at a literal anchor (at
// least three bytes) and is confirmed by an anchored regular expression on
// a bounded window after it, so a text costs one pass plus work only where
// an anchor occurs.
type rule struct {
	kind    string
	anchors []string
	// pattern confirms a secret at the anchor; it starts with ^. It is
	// compiled on the rule's first use (see regexp), so that a process
	// compiles only the rules its texts call for: a command that scans
	// nothing compiles none.
	pattern string
	compile sync.Once
	re      *regexp.Regexp
	// word: the byte before the secret must not be a letter or digit.
	word bool
	// exact: the secret has a fixed length, so the byte after it must not
	// continue it: a letter, a digit, or one of more.
	exact bool
	more  string
	// skip rejects a match that is not a secret after all.
	skip func(m []byte) bool
	// span widens the match to what must be redacted.
	span func(text []byte, start, end int) int
	// part narrows the match to the part of it that is secret (a URL's
	// password, not its scheme and user name).
	part func(m []byte) (start, end int)
}

const window = 512 // the longest secret a rule matches

var rules = []rule{
	{kind: "an AWS access key ID", anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		pattern: `^(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`, word: true, exact: true},
	{kind: "an AWS secret access key", anchors: []string{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey", "secret_access_key"},
		pattern: `^(?i:aws_secret_access_key|SecretAccessKey|secret_access_key)["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}`, exact: true},
	{kind: "an Anthropic API key", anchors: []string{"sk-ant-"},
		pattern: `^sk-ant-(?:api|admin|oat|ort)\d\d-[A-Za-z0-9_-]{80,}`, word: true},
	{kind: "an OpenAI API key", anchors: []string{"sk-"},
		pattern: `^sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})`, word: true},
	{kind: "a GitHub token", anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		pattern: `^gh[pousr]_[0-9A-Za-z]{36}`, word: true, exact: true},
	{kind: "a GitHub token", anchors: []string{"github_pat_"},
		pattern: `^github_pat_[0-9A-Za-z_]{82}`, word: true, exact: true, more: "_"},
	{kind: "a GitLab token", anchors: []string{"glpat-", "gldt-", "glrt-", "glptt-"},
		pattern: `^gl(?:pat|dt|rt|ptt)-[0-9A-Za-z_-]{20,}`, word: true},
	{kind: "a Slack token", anchors: []string{"xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.", "xapp-"},
		pattern: `^(?:(?:xox[bpaosre](?:\.[a-z0-9]+)?-[0-9]{10,13}|xapp-[0-9]-[0-9A-Z]{9,})-[0-9A-Za-z-]{10,}|xoxe(?:\.xox[a-z])?-[0-9]-[0-9A-Za-z-]{40,})`, word: true},
	{kind: "a Slack webhook URL", anchors: []string{"hooks.slack.com/"},
		pattern: `^hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}`},
	{kind: "a Stripe key", anchors: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"},
		pattern: `^[sr]k_(?:live|test|prod)_[0-9A-Za-z]{10,99}`, word: true},
	{kind: "a Google API key", anchors: []string{"AIza"},
		pattern: `^AIza[0-9A-Za-z_-]{35}`, word: true, exact: true, more: "_-"},
	{kind: "a private key", anchors: []string{"-----BEGIN"},
		pattern: `^-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`, span: privateKeySpan},
	{kind: "a JSON Web Token", anchors: []string{"eyJ"},
		pattern: `^eyJ[A-Za-z0-9_-]{15,}\.eyJ[A-Za-z0-9_-]{15}`, word: true, span: jwtSpan},
	{kind: "a password in a URL", anchors: []string{"://"},
		pattern: `^://[^\s:/@]*:[^\s/@]+@`, skip: maskedPassword, part: urlPassword},
}

// privateKeySpan extends a private key's header to the end of its END
// line, or to the end of the text if there is none yet.
func privateKeySpan(text []byte, start, end int) int {
	i := bytes.Index(text[end:], []byte("-----END"))
	if i < 0 {
		return len(text)
	}
	j := bytes.Index(text[end+i+8:], []byte("-----"))
	if j < 0 {
		return len(text)
	}
	return end + i + 8 + j + 5
}

// jwtSpan extends a JSON Web Token's header and the start of its claims
// (all the window confirms) over the rest of its claims and its
// signature, however long they are.
func jwtSpan(text []byte, start, end int) int {
	end = base64URLEnd(text, end)
	if end < len(text) && text[end] == '.' {
		end = base64URLEnd(text, end+1)
	}
	return end
}

// base64URLEnd returns the end of the run of base64url characters that
// starts at i.
func base64URLEnd(text []byte, i int) int {
	for i < len(text) && (isWord(text[i]) || text[i] == '-' || text[i] == '_') {
		i++
	}
	return i
}

// maskedPassword: a URL whose password is already masked ("****", or this
// package's own redaction) holds no secret.
func maskedPassword(m []byte) bool {
	start, end := urlPassword(m)
	pw := m[start:end]
	return bytes.HasPrefix(pw, []byte("[REDACTED")) || len(bytes.Trim(pw, "*")) == 0
}

// urlPassword is the span of the password in "://user:password@": the
// user name (which may be empty) holds no ':', the password may.
func urlPassword(m []byte) (start, end int) {
	return 3 + bytes.IndexByte(m[3:], ':') + 1, len(m) - 1
}

// match confirms the rule at start, where one of its anchors is.
// regexp returns the rule's pattern, compiled on first use.
func (r *rule) regexp() *regexp.Regexp {
	r.compile.Do(func() { r.re = regexp.MustCompile(r.pattern) })
	return r.re
}

func (r *rule) match(text []byte, start int) (Finding, bool) {
	if r.word && start > 0 && isWord(text[start-1]) {
		return Finding{}, false
	}
	loc := r.regexp().FindIndex(text[start:min(len(text), start+window)])
	if loc == nil {
		return Finding{}, false
	}
	end := start + loc[1]
	if r.exact && end < len(text) && (isWord(text[end]) || strings.IndexByte(r.more, text[end]) >= 0) {
		return Finding{}, false
	}
	if r.skip != nil && r.skip(text[start:end]) {
		return Finding{}, false
	}
	if r.part != nil {
		s, e := r.part(text[start:end])
		start, end = start+s, start+e
	}
	if r.span != nil {
		end = r.span(text, start, end)
	}
	return Finding{Kind: r.kind, Start: start, End: end}, true
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
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
		for _, a := range rules[i].anchors {
			h := triHash(a[0], a[1], a[2])
			ix.tri[h/64] |= 1 << (h % 64)
			ix.byFirst[a[0]] = append(ix.byFirst[a[0]], anchor{a, &rules[i]})
		}
	}
	return ix
}()

type anchor struct {
	lit  string
	rule *rule
}

func triHash(a, b, c byte) uint32 { return (uint32(a)<<10 ^ uint32(b)<<5 ^ uint32(c)) & 0xffff }

// Scan returns the secrets in text, ordered by position. Overlapping
// findings are merged into the first.
func Scan(text []byte) []Finding {
	var found []Finding
	for i := 0; i+3 <= len(text); i++ {
		h := triHash(text[i], text[i+1], text[i+2])
		if anchorIndex.tri[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, a := range anchorIndex.byFirst[text[i]] {
			if !bytes.HasPrefix(text[i:], []byte(a.lit)) {
				continue
			}
			if f, ok := a.rule.match(text, i); ok {
				found = append(found, f)
			}
		}
	}
	found = append(found, cards(text)...)
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b Finding) int { return a.Start - b.Start })
	merged := found[:1]
	for _, f := range found[1:] {
		last := &merged[len(merged)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			continue
		}
		merged = append(merged, f)
	}
	line, pos := 1, 0
	for i := range merged {
		line += bytes.Count(text[pos:merged[i].Start], []byte("\n"))
		pos = merged[i].Start
		merged[i].Line = line
	}
	return merged
}

// cards finds payment card numbers: 13 to 19 digits, optionally grouped by
// single spaces or dashes, not next to other digits or letters, with a
// card brand's prefix and length, that pass the Luhn check. A run that is
// not a card may begin with one that ends at a group's end (a card
// followed by its expiry date or code): the longest such one counts.
func cards(text []byte) []Finding {
	var found []Finding
	var digits [19]byte
	for i := 0; i < len(text); i++ {
		if !isDigit(text[i]) || i > 0 && (isWord(text[i-1]) || (text[i-1] == '-' || text[i-1] == '.') && i > 1 && isDigit(text[i-2])) {
			continue
		}
		// Collect the run starting at i.
		n, j, end := 0, i, i
		var cuts [len(digits) + 1][2]int // digits and end at each group's end
		nc := 0
		for j < len(text) && n < len(digits)+1 {
			c := text[j]
			if isDigit(c) {
				if n < len(digits) {
					digits[n] = c
				}
				n++
				j++
				end = j
				continue
			}
			if (c == ' ' || c == '-') && j+1 < len(text) && isDigit(text[j+1]) && j > i {
				if nc < len(cuts) {
					cuts[nc] = [2]int{n, end}
					nc++
				}
				j++
				continue
			}
			break
		}
		if !(end < len(text) && (isWord(text[end]) || text[end] == '.' && end+1 < len(text) && isDigit(text[end+1]))) {
			cuts[nc] = [2]int{n, end}
			nc++
		}
		for k := nc - 1; k >= 0; k-- {
			if m := cuts[k][0]; m >= 13 && m <= 19 && cardBrand(digits[:m]) && luhn(digits[:m]) {
				found = append(found, Finding{Kind: "a payment card number", Start: i, End: cuts[k][1]})
				break
			}
		}
		i = end
	}
	return found
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// cardBrand reports whether the number has the prefix and length of Visa,
// Mastercard, American Express, Discover, JCB, Diners Club or UnionPay.
func cardBrand(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 == 6011, p2 == 65, p4 >= 6440 && p4 <= 6499:
		return n >= 16 && n <= 19
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16 && n <= 19
	case p2 == 36, p2 == 38, p4 >= 3000 && p4 <= 3059:
		return n >= 14 && n <= 19
	case p2 == 62:
		return n >= 16 && n <= 19
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// Redact returns text with each of its findings (from Scan) replaced by
// "[REDACTED kind]", the kind without its article.
func Redact(text []byte, findings []Finding) []byte {
	var out []byte
	pos := 0
	for _, f := range findings {
		out = append(out, text[pos:f.Start]...)
		out = append(out, "[REDACTED "+strings.TrimPrefix(strings.TrimPrefix(f.Kind, "an "), "a ")+"]"...)
		pos = f.End
	}
	return append(out, text[pos:]...)
}
