package claude

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

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

// Execute runs one search (memtool.Memory.SearchTool). A query the model
// got wrong is an error whose text the runner sends with is_error set.
func (t *SearchTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	r := t.mem.SearchTool(ctx, input)
	if r.IsError {
		return nil, errors.New(strings.TrimPrefix(r.Text, "Error: "))
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: r.Text}}}, nil
}

// SearchText is memtool.SearchText: the text of a search's result as
// memory_search answers it.
func SearchText(res memtool.SearchResult, maxChars int) string {
	return memtool.SearchText(res, maxChars)
}
