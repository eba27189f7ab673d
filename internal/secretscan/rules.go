package secretscan

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// A rule finds one kind of secret. Each rule starts at a literal anchor (at
// least three bytes) and is confirmed there either by an anchored regular
// expression on a window no longer than the longest text it can match, or
// by confirm, which walks the text with the scanner's caches. A run of
// bytes that can go on without bound (a token's tail, a JWT's parts) is
// walked once, however many anchors lie in it, so that a text costs one
// pass plus bounded work at each anchor.
type rule struct {
	id      int // its index in rules
	kind    string
	anchors []string
	fold    bool // the anchors match in any case (secretAccessKey, SECRET_ACCESS_KEY)
	// pattern confirms a secret at the anchor; it starts with ^. It is
	// compiled on the rule's first use (see regexp), so that a process
	// compiles only the rules its texts call for: a command that scans
	// nothing compiles none.
	pattern string
	max     int // the window pattern is run on: its longest match, or a bound
	compile sync.Once
	re      *regexp.Regexp
	// confirm, instead of pattern, returns the end of the secret at start.
	confirm func(s *scanner, start int) (end int, ok bool)
	// word: the byte before the secret must not be a letter or digit.
	word bool
	// exact: the secret has a fixed length, so the byte after it must not
	// continue it: a letter, a digit, or one of more.
	exact bool
	more  string
	// run extends the match over the bytes that may continue it.
	run func(c byte) bool
	// skip rejects a match that is not a secret after all.
	skip func(m []byte) bool
	// span widens the match to what must be redacted; open reports a
	// private key whose extent cannot be told (see privateKeySpan).
	span func(s *scanner, start, end int) (spanEnd int, open bool)
	// part narrows the match to the part of it that is secret (a URL's
	// password, not its scheme and user name).
	part func(m []byte) (start, end int)
}

// window bounds the texts a secret's fixed parts may spread over: a URL's
// user name and password, the blanks around an AWS secret key's "=".
const window = 512

var rules = []rule{
	{kind: "an AWS access key ID", anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		pattern: `^(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`, max: 20, word: true, exact: true},
	{kind: "an AWS secret access key", anchors: []string{"aws_secret_access_key", "secretaccesskey", "secret_access_key"},
		confirm: awsSecretKey, exact: true, fold: true},
	{kind: "an Anthropic API key", anchors: []string{"sk-ant-"},
		pattern: `^sk-ant-(?:api|admin|oat|ort)\d\d-[A-Za-z0-9_-]{80}`, max: 95, word: true, run: isToken},
	{kind: "an OpenAI API key", anchors: []string{"sk-"},
		confirm: openAIKey, word: true},
	{kind: "a GitHub token", anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		pattern: `^gh[pousr]_[0-9A-Za-z]{36}`, max: 40, word: true, exact: true},
	{kind: "a GitHub token", anchors: []string{"github_pat_"},
		pattern: `^github_pat_[0-9A-Za-z_]{82}`, max: 93, word: true, exact: true, more: "_"},
	{kind: "a GitLab token", anchors: []string{"glpat-", "gldt-", "glrt-", "glptt-"},
		pattern: `^gl(?:pat|dt|rt|ptt)-[0-9A-Za-z_-]{20}`, max: 26, word: true, run: isToken},
	{kind: "a Slack token", anchors: []string{"xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.", "xapp-"},
		pattern: `^(?:(?:xox[bpaosre](?:\.[a-z0-9]+)?-[0-9]{10,13}|xapp-[0-9]-[0-9A-Z]{9,})-[0-9A-Za-z-]{10}|xoxe(?:\.xox[a-z])?-[0-9]-[0-9A-Za-z-]{40})`, max: 64,
		word: true, run: isSlack}, // the window bounds the + and {9,}: real parts are far shorter
	{kind: "a Slack webhook URL", anchors: []string{"hooks.slack.com/"},
		pattern: `^hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20}`, max: 46, run: isHook},
	{kind: "a Stripe key", anchors: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"},
		pattern: `^[sr]k_(?:live|test|prod)_[0-9A-Za-z]{10,99}`, max: 107, word: true},
	{kind: "a Google API key", anchors: []string{"AIza"},
		pattern: `^AIza[0-9A-Za-z_-]{35}`, max: 39, word: true, exact: true, more: "_-"},
	{kind: "a private key", anchors: []string{"-----BEGIN"},
		confirm: privateKeyHeader, span: privateKeySpan},
	{kind: "a JSON Web Token", anchors: []string{"eyJ"},
		confirm: jsonWebToken, word: true},
	{kind: "a password in a URL", anchors: []string{"://"},
		confirm: urlUserinfo, skip: maskedPassword, part: urlPassword},
}

// keyEnd is the END line of a private key (a rule only for its pattern).
var keyEnd = rule{kind: "a private key's END line",
	pattern: `^-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`, max: 130}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isToken reports a base64url byte, which tokens are made of.
func isToken(c byte) bool { return isWord(c) || c == '-' || c == '_' }

func isSlack(c byte) bool { return isWord(c) || c == '-' }

func isHook(c byte) bool { return isToken(c) || c == '/' || c == '+' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// regexp returns the rule's pattern, compiled on first use.
func (r *rule) regexp() *regexp.Regexp {
	r.compile.Do(func() { r.re = regexp.MustCompile(r.pattern) })
	return r.re
}

// match confirms the rule at start, where one of its anchors is; inRun
// says that every byte of that anchor is of the rule's run.
func (r *rule) match(s *scanner, start int, inRun bool) (Finding, bool) {
	text := s.text
	if r.word && start > 0 && isWord(text[start-1]) && !s.ended(start) {
		return Finding{}, false
	}
	if inRun && start < s.covered[r.id] {
		// Inside a run this rule already took whole, with an anchor
		// that does not leave it: whatever matched here would end
		// where that did. An anchor with a byte the run stops at (the
		// dots of hooks.slack.com/ and xoxe.) may start a secret that
		// goes on past it.
		return Finding{}, false
	}
	var end int
	if r.confirm != nil {
		e, ok := r.confirm(s, start)
		if !ok {
			return Finding{}, false
		}
		end = e
	} else if e := s.find(r, start); e < 0 {
		return Finding{}, false
	} else {
		end = e
	}
	if r.exact && end < len(text) && (isWord(text[end]) || strings.IndexByte(r.more, text[end]) >= 0) {
		return Finding{}, false
	}
	if r.skip != nil && r.skip(text[start:end]) {
		return Finding{}, false
	}
	if r.part != nil {
		ps, pe := r.part(text[start:end])
		start, end = start+ps, start+pe
	}
	if r.run != nil {
		end = s.runEnd(&s.runs[r.id], r.run, end)
		s.covered[r.id] = end
	}
	open := false
	if r.span != nil {
		end, open = r.span(s, start, end)
	}
	return Finding{Kind: r.kind, Start: start, End: end, Open: open}, true
}

// awsSecretKey confirms what
// (?i:aws_secret_access_key|secretaccesskey|secret_access_key)["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}
// matches, the blanks taking no more than the window.
func awsSecretKey(s *scanner, start int) (int, bool) {
	text := s.text
	i := start
	for _, name := range []string{"aws_secret_access_key", "secretaccesskey", "secret_access_key"} {
		if len(text)-start >= len(name) && bytes.EqualFold(text[start:start+len(name)], []byte(name)) {
			i += len(name)
			break
		}
	}
	limit := min(len(text), start+window)
	quote := func() {
		if i < limit && (text[i] == '"' || text[i] == '\'') {
			i++
		}
	}
	blanks := func() {
		j := i
		for i < limit && isSpace(text[i]) {
			i++
		}
		s.work += i - j
	}
	quote()
	blanks()
	if i == start || i >= limit || text[i] != ':' && text[i] != '=' {
		return 0, false
	}
	i++
	blanks()
	quote()
	if limit-i < 40 {
		return 0, false
	}
	s.work += 40
	for _, c := range text[i : i+40] {
		if !isWord(c) && c != '/' && c != '+' {
			return 0, false
		}
	}
	return i + 40, true
}

// openAIKey confirms an OpenAI key: sk-proj- (or sk-svcacct-, sk-admin-,
// sk-None-), at least 20 base64url bytes, the marker T3BlbkFJ and at least
// 20 more, all of it redacted to the end of its run; or the older sk-, 20
// letters or digits, the marker, 20 more.
func openAIKey(s *scanner, start int) (int, bool) {
	text := s.text
	for _, p := range []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"} {
		if !bytes.HasPrefix(text[start:], []byte(p)) {
			continue
		}
		from := start + len(p)
		end := s.runEnd(&s.openAIRun, isToken, from)
		// The first marker far enough in is the one to try: a later one
		// leaves less of the run after it.
		if m := s.next(&s.openAIMarker, from+20); m >= 0 && m+len(openAIMarker)+20 <= end {
			return end, true
		}
		return 0, false
	}
	end := start + 3 + 20 + len(openAIMarker) + 20
	if end > len(text) || string(text[start+23:start+31]) != openAIMarker {
		return 0, false
	}
	s.work += 40
	for i := start + 3; i < end; i++ {
		if i == start+23 {
			i += len(openAIMarker)
		}
		if !isWord(text[i]) {
			return 0, false
		}
	}
	return end, true
}

const openAIMarker = "T3BlbkFJ"

// jsonWebToken confirms a JSON Web Token: eyJ and 15 or more base64url
// bytes, a dot, eyJ and 15 or more; its span is the header, the claims and
// the signature however long each is.
func jsonWebToken(s *scanner, start int) (int, bool) {
	text := s.text
	h := s.runEnd(&s.jwtHeader, isToken, start)
	if h-start < 18 || h+4 > len(text) || text[h] != '.' || string(text[h+1:h+4]) != "eyJ" {
		return 0, false
	}
	end := s.runEnd(&s.jwtClaims, isToken, h+1)
	if end-(h+1) < 18 {
		return 0, false
	}
	if end < len(text) && text[end] == '.' {
		end = s.runEnd(&s.jwtSignature, isToken, end+1)
	}
	return end, true
}

// urlUserinfo confirms what ://[^\s:/@]*:[^\s/@]+@ matches within the
// window: a URL's user name, which may be empty, and password.
func urlUserinfo(s *scanner, start int) (int, bool) {
	text := s.text
	limit := min(len(text), start+window)
	i := start + 3
	for i < limit && !isSpace(text[i]) && text[i] != ':' && text[i] != '/' && text[i] != '@' {
		i++
	}
	if i >= limit || text[i] != ':' {
		s.work += i - start
		return 0, false
	}
	i++
	p := i
	for i < limit && !isSpace(text[i]) && text[i] != '/' && text[i] != '@' {
		i++
	}
	s.work += i - start
	if i == p || i >= limit || text[i] != '@' {
		return 0, false
	}
	return i + 1, true
}

// maskedPassword: a URL whose password is only asterisks holds no secret.
// Nothing else counts as masked: this package's own "[REDACTED kind]"
// holds a blank, so a URL password never matches it.
func maskedPassword(m []byte) bool {
	start, end := urlPassword(m)
	return len(bytes.Trim(m[start:end], "*")) == 0
}

// urlPassword is the span of the password in "://user:password@": the
// user name (which may be empty) holds no ':', the password may.
func urlPassword(m []byte) (start, end int) {
	return 3 + bytes.IndexByte(m[3:], ':') + 1, len(m) - 1
}

// privateKeyHeader confirms what
// -----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?----- matches: a
// label of at most 100 bytes ending with the last "PRIVATE KEY" that is
// followed by the header's end.
func privateKeyHeader(s *scanner, start int) (int, bool) {
	const label, marker = len("-----BEGIN"), "PRIVATE KEY"
	from := start + label
	limit := min(s.runEnd(&s.keyLabel, isKeyLabel, from), from+100)
	m := s.next(&s.keyMarker, from)
	if m < 0 || m > limit {
		return 0, false
	}
	end := -1
	for m >= 0 && m <= limit {
		rest := s.text[m+len(marker):]
		if bytes.HasPrefix(rest, []byte("-----")) {
			end = m + len(marker) + 5
		} else if bytes.HasPrefix(rest, []byte(" BLOCK-----")) {
			end = m + len(marker) + 11
		}
		i := bytes.Index(s.text[m+1:min(len(s.text), limit+len(marker))], []byte(marker))
		s.work += max(i, 0) + len(marker)
		if i < 0 {
			break
		}
		m += 1 + i
	}
	return end, end >= 0
}

func isKeyLabel(c byte) bool {
	return c >= 'A' && c <= 'Z' || isDigit(c) || c == ' ' || c == '_' || c == '-'
}

// privateKeySpan extends a private key's header to the end of its END
// line: the first private key END line after it, if what lies between is
// a key's body (see keyBody; another -----BEGIN line is not). Else the key
// is open: its span is the header's line, and it is reported so that a
// redaction does not cut text that is no key's (see Finding.Open).
func privateKeySpan(s *scanner, start, end int) (int, bool) {
	if e, stop := s.keyEnd(end); e >= 0 && keyBody(s, end, e) {
		return stop, false
	}
	if nl := s.next(&s.newline, end); nl >= 0 {
		return nl, true
	}
	return len(s.text), true
}

func isBase64(c byte) bool { return isWord(c) || c == '+' || c == '/' || c == '=' || c == '\\' }

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// keyBody reports whether text[start:e], what lies between a private
// key's header and its END line, could be a PEM or OpenPGP key's body:
// the rest of the header's line, then whole lines, each blank, base64
// (maybe with \n escapes: a key in a string) or, but for the header's own
// line, a header such as "Proc-Type: 4,ENCRYPTED". A line of prose is not.
// The rest of the header's line is walked for each header (no other
// header can lie in it); the lines after it are judged by badLine, which
// walks each line once however many headers ask, so that the headers of
// a text cost no more together than one walk over it, also where each
// sits in a line that looks like a header's ("X: -----BEGIN …").
func keyBody(s *scanner, start, e int) bool {
	text := s.text
	i := start
	for i < e && isBlank(text[i]) {
		i++
	}
	for i < e && isBase64(text[i]) {
		i++
	}
	for i < e && isBlank(text[i]) {
		i++
	}
	s.work += i - start
	if i >= e {
		return true
	}
	if text[i] != '\n' {
		return false
	}
	bad := s.badLine(i + 1)
	return bad < 0 || bad >= e
}

// badLine returns the first byte at or after q, where a line starts,
// that the lines of a key's body after its header's line cannot hold
// (see keyBody), walking the text line by line, or -1. An END line stops
// it at its first dash, so the body before an END line at e is one where
// badLine returns e or more. Asked at growing positions, it walks each
// line once.
func (s *scanner) badLine(q int) int {
	c := &s.keyBodyBad
	if c.valid && q >= c.from && (c.at < 0 || c.at >= q) {
		return c.at
	}
	c.valid, c.from, c.at = true, q, -1
	text := s.text
	i := q
	for i < len(text) {
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		j := i
		for j < len(text) && (isWord(text[j]) || text[j] == '-') {
			j++
		}
		if j > i && j+1 < len(text) && text[j] == ':' && text[j+1] == ' ' {
			for j < len(text) && text[j] != '\n' {
				j++
			}
			i = j + 1
			continue
		}
		for i < len(text) && isBase64(text[i]) {
			i++
		}
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		if i < len(text) && text[i] != '\n' {
			c.at = i
			break
		}
		i++
	}
	s.work += min(i, len(text)) - q
	return c.at
}
