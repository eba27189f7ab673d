package memtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SearchInput is the input of the memory_search tool that memtool offers
// next to the memory tool (claude.NewSearchTool, the MCP server's
// memory_search): the fields of SearchQuery, named as the tool names them.
type SearchInput struct {
	Query         *string `json:"query"`
	Regex         bool    `json:"regex"`
	CaseSensitive bool    `json:"case_sensitive"`
	Path          string  `json:"path"`
	Limit         int     `json:"limit"`
}

// SearchTool runs one memory_search call, input being its JSON
// arguments, and returns what the model reads: SearchText of the result,
// or an error Result for an input or query it refuses (unknown members,
// no query, a bad regular expression, a path outside /memories or
// leading out of the store through a link), for a store or policy that
// refuses it with a reason for the model (a Refusal: that reason) and
// for a store that fails (without its detail).
func (m *Memory) SearchTool(ctx context.Context, input []byte) Result {
	if err := searchKeys(input); err != nil {
		return errorResult(fmt.Sprintf("invalid memory_search input: %v", err))
	}
	in, msg := decodeSearchInput(input)
	if msg != "" {
		return errorResult("invalid memory_search input: " + msg)
	}
	res, err := m.Search(ctx, SearchQuery{Query: *in.Query, Regex: in.Regex, CaseSensitive: in.CaseSensitive, Path: in.Path, Limit: in.Limit})
	var ref Refusal
	if se := (*SearchError)(nil); errors.As(err, &se) {
		return errorResult(se.Reason)
	} else if errors.Is(err, ErrBusy) {
		return errorResult("the memory store is busy (another process holds it); try the search again")
	} else if errors.As(err, &ref) {
		return errorResult(string(ref)) // a store's or policy's refusal, worded for the model
	} else if errors.Is(err, context.DeadlineExceeded) {
		return errorResult("the search did not finish in time; narrow it with path and try again")
	} else if errors.Is(err, context.Canceled) {
		return errorResult("the search was cancelled")
	} else if err != nil {
		m.opts.Logger.ErrorContext(ctx, "memtool: store failure", "command", "memory_search", "path", in.Path, "err", err)
		return errorResult("the search failed (the memory store did not answer); try again")
	}
	return Result{Text: SearchText(res, m.MaxViewChars())}
}

// decodeSearchInput reads a memory_search input whose keys searchKeys has
// checked, or says what is wrong with it. A limit may be written as any
// JSON number that is a whole one (5, 5.0, 5e0), as the memory tool
// takes insert_line; a member of the wrong type is named, with the type
// it must have.
func decodeSearchInput(input []byte) (SearchInput, string) {
	var in struct {
		SearchInput
		Limit json.RawMessage `json:"limit"`
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
			if searchTypes[field] != "" {
				return SearchInput{}, fmt.Sprintf("%s must be %s, not %s", field, searchTypes[field], te.Value)
			}
		}
		return SearchInput{}, err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return SearchInput{}, "the input must be a single JSON object, with nothing after it"
	}
	if in.Query == nil {
		return SearchInput{}, "query is required"
	}
	if limit := string(in.Limit); limit != "" && limit != "null" {
		f, err := strconv.ParseFloat(limit, 64)
		switch {
		case err != nil && strings.HasPrefix(limit, `"`):
			return SearchInput{}, "limit must be a whole number, not string"
		case err != nil || f != math.Trunc(f):
			return SearchInput{}, fmt.Sprintf("limit must be a whole number, not %.20s", limit)
		case f < 0:
			return SearchInput{}, fmt.Sprintf("limit %s is less than 1", limit)
		case f > MaxSearchLimit:
			return SearchInput{}, fmt.Sprintf("limit %s is more than %d", limit, MaxSearchLimit)
		}
		in.SearchInput.Limit = int(f)
	}
	return in.SearchInput, ""
}

// searchTypes are the types of SearchInput's members, as the model reads
// them in an error.
var searchTypes = map[string]string{"query": "a string", "regex": "true or false", "case_sensitive": "true or false", "path": "a string", "limit": "a whole number"}

// searchParams are SearchInput's JSON names.
var searchParams = []string{"query", "regex", "case_sensitive", "path", "limit"}

// searchKeys refuses what encoding/json would merge without a word, as
// ParseCommand does for the memory tool: a parameter given twice, and a
// key that differs from a parameter's name only by case. Input that is not
// one JSON object is left to the decoder, which words its error.
func searchKeys(input []byte) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := t.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		if seen[key] {
			return fmt.Errorf("duplicate parameter '%s'", key)
		}
		seen[key] = true
		for _, name := range searchParams {
			if key != name && strings.EqualFold(key, name) {
				return fmt.Errorf("unknown parameter '%s' (did you mean '%s'?)", key, name)
			}
		}
	}
	return nil
}

// SearchText is the text of a search's result as memory_search answers
// it: a line that counts the matches, then one line per match,
// PATH:LINE:TEXT, cut at maxChars characters with a note that says how
// many of the lines were shown. A line too long to show whole is cut
// short and marked with "…". When files could not be read, a last note,
// never cut, counts them and names the first (UnreadableText), so that
// the model is not told that a memory it cannot see holds no match.
func SearchText(res SearchResult, maxChars int) string {
	note := UnreadableText(res, maxChars/4)
	if note != "" {
		note = "\n\n[" + note + "]"
	}
	if res.Total == 0 {
		if note != "" {
			return "No lines match in the files that could be read." + note
		}
		return "No lines match."
	}
	head := fmt.Sprintf("%d matching lines", res.Total)
	if res.Total == 1 {
		head = "1 matching line"
	}
	if len(res.Matches) < res.Total {
		head += fmt.Sprintf(" (the first %d of them below; narrow the search with path, or raise limit)", len(res.Matches))
	}
	const noteRoom, maxLine = 200, 500
	b := []byte(head + ":")
	used := utf8.RuneCount(b)
	for i, m := range res.Matches {
		text := m.Text
		if utf8.RuneCountInString(text) > maxLine {
			text = string([]rune(text)[:maxLine]) + "…"
		}
		line := "\n" + m.Path + ":" + strconv.Itoa(m.Line) + ":" + text
		n := utf8.RuneCountInString(line)
		if used+n > maxChars-noteRoom-utf8.RuneCountInString(note) {
			b = fmt.Appendf(b, "\n\n[Output cut at %d characters: showing %d of the %d lines found. Narrow the search with path or a longer query.]", maxChars, i, res.Total)
			break
		}
		b = append(b, line...)
		used += n
	}
	return string(append(b, note...))
}

// UnreadableText says, in a sentence for the model or a person, how many
// files a search could not read and which (the first of
// res.UnreadablePaths that fit in about maxChars characters), and how to
// learn why; "" if it read every file. It names files, never their
// content: the reason a file does not open is view's to tell.
func UnreadableText(res SearchResult, maxChars int) string {
	if res.Unreadable == 0 {
		return ""
	}
	head := fmt.Sprintf("%d files could not be read, so they were not searched", res.Unreadable)
	tail := "View one of them to see why."
	if res.Unreadable == 1 {
		head, tail = "1 file could not be read, so it was not searched", "View it to see why."
	}
	var names []string
	room := maxChars - utf8.RuneCountInString(head+tail) - len("; the first 20: . ")
	for _, p := range res.UnreadablePaths {
		if room -= utf8.RuneCountInString(p) + 2; room < 0 {
			break
		}
		names = append(names, p)
	}
	switch {
	case len(names) == 0:
		return head + ". " + tail
	case len(names) < res.Unreadable:
		return fmt.Sprintf("%s; the first %d: %s. %s", head, len(names), strings.Join(names, ", "), tail)
	}
	return head + ": " + strings.Join(names, ", ") + ". " + tail
}
