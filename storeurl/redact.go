package storeurl

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// # Secrets in store URLs
//
// A database or bucket URL may hold a password or a token, and messages
// quote store URLs (errors, summaries, banners) and the errors of the
// drivers that open them. Every such message goes through Redact.

// Masked is what Redact puts in place of a secret.
const Masked = "xxxxx"

// secretKey matches, in a query string or a key=value connection string,
// a parameter that carries a credential: password, sslpassword, token,
// secret and access keys, and the signatures and credentials of signed
// URLs. In a URL's query (after '?' or '&') the value runs to the next
// '&', blank or double quote, as pgx reads it (it takes ?password=a;b#c
// for the password "a;b#c"); in a connection string it runs
// to the next separator (';' too) or is quoted with '. The key and what
// comes before the value are group 1 or 3, the value group 2 or 4.
//
// Both patterns are compiled on first use, not at package initialisation:
// most runs of memtool never redact anything (the message is for a
// failure), and every process that links storeurl would otherwise pay
// for them before main.
var secretKey = sync.OnceValue(func() *regexp.Regexp {
	const key = `[a-z0-9_.-]*(?:password|passwd|pwd|token|secret|access[_-]?key|api[_-]?key|credentials?|signature|sig|sas)(?:[_-]?(?:key|id|token))*\s*=\s*`
	return regexp.MustCompile(`(?i)([?&]` + key + `)([^\s&"]+)|((?:^|[^a-z0-9])` + key + `)('[^']*'|[^\s&;'"]+)`)
})

// secretValue returns the value of a secretKey match (as
// FindAllStringSubmatch gives it), quotes and all.
func secretValue(m []string) string { return m[2] + m[4] }

// userinfo matches what comes before the password of a URL's userinfo:
// scheme://user: (see passwords).
var userinfo = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#\s:@]*:`)
})

// passwords returns where the passwords of the URLs' userinfo in s are,
// as [start, end) byte offsets: scheme://user:PASSWORD@. A password runs
// to the last '@' before the next '/', '?', '#' or space; if there is no
// '@' there, the password holds one of those characters unescaped (a
// URL parser then takes part of it for the host, the path or the query,
// and quotes it in its error), and it runs to the last '@' before a space
// or a quote, unless what follows the colon is a port (digits, then '/',
// '?', '#' or the end): http://host:80/path@x has no password.
func passwords(s string) [][2]int {
	var out [][2]int
	end := 0
	for _, m := range userinfo().FindAllStringIndex(s, -1) {
		j := m[1]
		if m[0] < end {
			continue // inside the password before
		}
		run := s[j:]
		if k := strings.IndexAny(run, "/?# \t\r\n"); k >= 0 {
			run = run[:k]
		}
		at := strings.LastIndexByte(run, '@')
		if at < 0 && !isPort(s[j:]) {
			run = s[j:]
			if k := strings.IndexAny(run, " \t\r\n\"'`<>"); k >= 0 {
				run = run[:k]
			}
			at = strings.LastIndexByte(run, '@')
		}
		if at >= 0 {
			out = append(out, [2]int{j, j + at})
			end = j + at
		}
	}
	return out
}

// isPort reports whether s starts with a port: digits, then '/', '?',
// '#', a space or the end.
func isPort(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i == len(s) || strings.IndexByte("/?# \t\r\n", s[i]) >= 0
}

// maskPasswords masks the passwords (see passwords) of the URLs in s.
func maskPasswords(s string) string {
	var b strings.Builder
	last := 0
	for _, p := range passwords(s) {
		b.WriteString(s[last:p[0]])
		b.WriteString(Masked)
		last = p[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// Redact returns s with the secrets it holds masked: the password of every
// URL's userinfo, the values of credential parameters, and, wherever they
// occur, the secrets of the given store URLs (so that a driver's error
// that quotes a password outside of any URL, or decoded, or the head of
// one that a URL parser took for a port, is masked too;
// secrets shorter than 4 bytes are masked only in those URL and key=value
// forms, lest every "ab" of a message go).
func Redact(s string, urls ...string) string {
	for _, u := range urls {
		for _, secret := range urlSecrets(u) {
			if len(secret) >= 4 {
				s = strings.ReplaceAll(s, secret, Masked)
			}
			// A password with an unescaped '@': a driver that splits the
			// URL at the first '@' quotes the rest as part of the host
			// ("lookup TAIL@host"), so each tail is masked before its '@'.
			for i := strings.IndexByte(secret, '@'); i >= 0; i = strings.IndexByte(secret, '@') {
				secret = secret[i+1:]
				if secret != "" {
					s = strings.ReplaceAll(s, secret+"@", Masked+"@")
				}
			}
		}
		for _, head := range passwordHeads(u) {
			s = strings.ReplaceAll(s, ":"+head+`"`, ":"+Masked+`"`)
			if len(head) >= 4 {
				s = strings.ReplaceAll(s, head, Masked)
			}
		}
	}
	return secretKey().ReplaceAllString(maskPasswords(s), "${1}${3}"+Masked)
}

// urlSecrets returns the secrets of a store URL as they are written in it
// and decoded: the userinfo password and the credential parameters' values.
func urlSecrets(raw string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	for _, p := range passwords(raw) {
		add(raw[p[0]:p[1]])
	}
	// A password with a space, which no URL parser takes: raw is one URL,
	// so its password runs to its last '@'.
	if m := userinfo().FindStringIndex(raw); m != nil {
		if at := strings.LastIndexByte(raw, '@'); at > m[1] && strings.ContainsAny(raw[m[1]:at], " \t") {
			add(raw[m[1]:at])
		}
	}
	for _, m := range secretKey().FindAllStringSubmatch(raw, -1) {
		add(strings.Trim(secretValue(m), "'"))
	}
	return out
}

// passwordHeads returns, for each password of raw's userinfo that holds
// an unescaped '/', '?', '#' or blank, what comes before it: a URL parser
// ends the authority there, takes that head for a port and quotes it
// (invalid port ":HEAD" after host), or quotes the URL cut there.
func passwordHeads(raw string) []string {
	var out []string
	for _, p := range passwords(raw) {
		if i := strings.IndexAny(raw[p[0]:p[1]], "/?# \t"); i > 0 {
			out = append(out, raw[p[0]:p[0]+i])
		}
	}
	return out
}

// redactedError is an error of the store at url, shown with its secrets
// masked; errors.Is and As still see the error itself.
type redactedError struct {
	err error
	url string
}

func (e redactedError) Error() string { return Redact(e.err.Error(), e.url) }
func (e redactedError) Unwrap() error { return e.err }
