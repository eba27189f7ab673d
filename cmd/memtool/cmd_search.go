package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/memtool/memtool"
)

// The exit statuses of search are grep's: 0 when a line matched, 1 when
// none did, 2 on any error (a bad query, a store that cannot be opened),
// and 2 also when files could not be read (in an encrypted store, files
// that do not open), after printing the lines of the others, as grep
// does for a file it cannot read.
const (
	exitNoMatch     = 1
	exitSearchError = 2
)

func setupSearch(fs *flag.FlagSet) runFunc {
	regex := fs.Bool("regex", false, "QUERY is a regular expression (Go RE2 syntax)")
	caseSensitive := fs.Bool("case-sensitive", false, "match letters only in the case QUERY gives")
	prefix := fs.String("path", memtool.Root, "search only this directory (everything below it) or file")
	limit := fs.Int("limit", memtool.DefaultSearchLimit, "print at most N lines (at most "+strconv.Itoa(memtool.MaxSearchLimit)+")")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if *limit < 1 {
			return inv.fail(exitSearchError, "--limit must be at least 1 (run 'memtool search -h')")
		}
		inv.sf.noRecord = true // searching, like info, records no policy
		mem, closer, err := openMemory(ctx, env, &inv.sf, false)
		if err != nil {
			return inv.fail(exitSearchError, "%v", err)
		}
		defer closer.Close()
		res, err := mem.Search(ctx, memtool.SearchQuery{Query: inv.args[0], Regex: *regex, CaseSensitive: *caseSensitive, Path: *prefix, Limit: *limit})
		if se := (*memtool.SearchError)(nil); errors.As(err, &se) {
			return inv.fail(exitSearchError, "%s", se.Reason)
		} else if err != nil {
			return inv.fail(exitSearchError, "%v", err)
		}
		w := bufio.NewWriter(env.stdout)
		for _, m := range res.Matches {
			fmt.Fprintf(w, "%s:%d:%s\n", env.termText(m.Path), m.Line, env.termText(m.Text))
		}
		if err := w.Flush(); err != nil {
			return exitBrokenIO
		}
		if res.Total > len(res.Matches) {
			fmt.Fprintf(env.stderr, "memtool search: %d of %d matching lines shown (--limit %d)\n", len(res.Matches), res.Total, *limit)
		}
		if note := memtool.UnreadableText(res, 4000); note != "" {
			fmt.Fprintf(env.stderr, "memtool search: %s\n", note)
			return exitSearchError
		}
		if res.Total == 0 {
			return exitNoMatch
		}
		return exitOK
	}
}

// terminalSafe is s with its control characters but tab and newline (C0,
// DEL, C1) and bidirectional formatting characters written as Go escapes
// (\x1b, \r, \u202e), for a terminal: the model writes the memories'
// text, and an escape sequence in it could otherwise set the operator's
// clipboard or title, or, like a carriage return or a bidi override, hide
// or reorder what search, view or a history diff shows. Piped, they print
// the text as stored (termText).
func terminalSafe(s string) string {
	if !strings.ContainsFunc(s, shownEscaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !shownEscaped(r):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func shownEscaped(r rune) bool {
	return r != '\t' && r != '\n' && unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// termText is s as it should reach stdout: terminalSafe on a terminal,
// as it is otherwise.
func (env *cliEnv) termText(s string) string {
	if env.stdoutTerminal {
		return terminalSafe(s)
	}
	return s
}
