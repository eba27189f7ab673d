package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
)

// SearchToolName is the name the model calls the search tool by.
const SearchToolName = "memory_search"

// SearchTool is an extra tool, memory_search, that lets the model search
// its memory (memtool.Memory.Search) instead of viewing every file: a
// custom tool declared next to memory_20250818, which the model does not
// know otherwise. It is opt-in: give it to a runner with
// WithTools(NewSearchTool(mem)), or declare it with DeclareTools and
// answer it with RunTools.
//
// Its answer is one line per match, PATH:LINE:TEXT, after a line that
// counts them, cut at the Memory's view limit (Options.MaxViewChars, as
// view is) with a note that says how many lines were left out. A query
// memtool refuses (an empty one, a bad regular expression, a path outside
// /memories) is an error the model reads.
type SearchTool struct{ mem *memtool.Memory }

var _ anthropic.BetaTool = (*SearchTool)(nil)

// NewSearchTool returns the memory_search tool over mem, the Memory of
// the memory tool the model uses.
func NewSearchTool(mem *memtool.Memory) *SearchTool { return &SearchTool{mem: mem} }

func (t *SearchTool) Name() string { return SearchToolName }

func (t *SearchTool) Description() string {
	return "Search the files of your memory directory /memories for lines that hold a text (case-insensitive " +
		"unless case_sensitive) or match a regular expression (regex, Go RE2 syntax). Answers one line per match, " +
		"PATH:LINE:TEXT, in path and line order; view the file to read around a match. Hidden files are skipped, as view lists them."
}

func (t *SearchTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"query":          map[string]any{"type": "string", "description": "the text to find in a line, or a regular expression with regex"},
			"regex":          map[string]any{"type": "boolean", "description": "query is a regular expression (Go RE2 syntax), matched against each line"},
			"case_sensitive": map[string]any{"type": "boolean", "description": "match letters only in the case the query gives"},
			"path":           map[string]any{"type": "string", "description": "search only this directory or file (default /memories)"},
			"limit":          map[string]any{"type": "integer", "description": "the most lines to answer (default " + strconv.Itoa(memtool.DefaultSearchLimit) + ")", "minimum": 1, "maximum": memtool.MaxSearchLimit},
		},
		Required: []string{"query"},
	}
}

// searchInput is the tool's input.
type searchInput struct {
	Query         *string `json:"query"`
	Regex         bool    `json:"regex"`
	CaseSensitive bool    `json:"case_sensitive"`
	Path          string  `json:"path"`
	Limit         int     `json:"limit"`
}

// Execute runs one search. A query the model got wrong is an error whose
// text the runner sends with is_error set.
func (t *SearchTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	var in searchInput
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("invalid memory_search input: %v", err)
	}
	if in.Query == nil {
		return nil, errors.New("invalid memory_search input: query is required")
	}
	if in.Limit < 0 {
		return nil, fmt.Errorf("invalid memory_search input: limit %d is less than 1", in.Limit)
	}
	res, err := t.mem.Search(ctx, memtool.SearchQuery{Query: *in.Query, Regex: in.Regex, CaseSensitive: in.CaseSensitive, Path: in.Path, Limit: in.Limit})
	if se := (*memtool.SearchError)(nil); errors.As(err, &se) {
		return nil, se
	} else if err != nil {
		return nil, fmt.Errorf("the search failed (the memory store did not answer); try again")
	}
	text := SearchText(res, t.mem.MaxViewChars())
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: text}}}, nil
}

// SearchText is the text of a search's result as memory_search answers
// it: a line that counts the matches, then one line per match,
// PATH:LINE:TEXT, cut at maxChars characters with a note that says how
// many of the lines were shown. A line too long to show whole is cut
// short and marked with "…".
func SearchText(res memtool.SearchResult, maxChars int) string {
	if res.Total == 0 {
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
		if used+n > maxChars-noteRoom {
			b = fmt.Appendf(b, "\n\n[Output cut at %d characters: showing %d of the %d lines found. Narrow the search with path or a longer query.]", maxChars, i, res.Total)
			break
		}
		b = append(b, line...)
		used += n
	}
	return string(b)
}
