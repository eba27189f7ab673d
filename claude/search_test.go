package claude_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/memstore"
)

// The runner declares memory_search next to the memory tool when given
// it, and answers the model's searches: the lines that match, or the
// error of a query memtool refuses, with is_error set.
func TestSearchToolInRunner(t *testing.T) {
	mem := memtool.New(memstore.New(), nil)
	ctx := context.Background()
	for _, c := range []*memtool.Create{
		{Path: "/memories/prefs.md", FileText: "Likes green tea\nHates coffee\n"},
		{Path: "/memories/d/log.md", FileText: "tea on Monday"},
	} {
		if r := mem.Execute(ctx, c); r.IsError {
			t.Fatal(r.Text)
		}
	}
	srv := runScript(t, false, mem, []claude.Option{claude.WithTools(claude.NewSearchTool(mem))}, claudetest.Turn{Calls: []claudetest.ToolUse{
		{ID: "toolu_a", Name: "memory_search", Input: `{"query": "TEA"}`},
		{ID: "toolu_b", Name: "memory_search", Input: `{"query": "(tea", "regex": true}`},
		{ID: "toolu_c", Name: "memory_search", Input: `{"query": "tea", "path": "/memories/d", "case_sensitive": true}`},
		{ID: "toolu_d", Name: "memory_search", Input: `{"query": "tea", "unknown": 1}`},
	}})
	reqs := srv.Requests()
	if tools := string(reqs[0].Tools); !strings.Contains(tools, `"memory_search"`) || !strings.Contains(tools, `"memory_20250818"`) {
		t.Errorf("tools declared: %s", tools)
	}
	results := map[string]claudetest.ToolResult{}
	for _, r := range reqs[len(reqs)-1].ToolResults() {
		results[r.ToolUseID] = r
	}
	for id, want := range map[string]struct {
		text    string
		isError bool
	}{
		"toolu_a": {"2 matching lines:\n/memories/d/log.md:1:tea on Monday\n/memories/prefs.md:1:Likes green tea", false},
		"toolu_b": {"Error: The search query is not a valid regular expression", true},
		"toolu_c": {"1 matching line:\n/memories/d/log.md:1:tea on Monday", false},
		"toolu_d": {"Error: invalid memory_search input", true},
	} {
		got := results[id]
		if !strings.HasPrefix(got.Text, want.text) || got.IsError != want.isError {
			t.Errorf("%s: %q (is_error %v); want %q… (is_error %v)", id, got.Text, got.IsError, want.text, want.isError)
		}
	}
}

// memory_search's answer is cut at the view limit, as view's is, with a
// note that says how many lines it shows; a very long line is cut short.
func TestSearchTextCut(t *testing.T) {
	var res memtool.SearchResult
	for i := range 1000 {
		res.Matches = append(res.Matches, memtool.SearchMatch{Path: "/memories/f.md", Line: i + 1, Text: strings.Repeat("x", 100)})
	}
	res.Matches[0].Text = strings.Repeat("é", 2000)
	res.Total = 5000
	text := claude.SearchText(res, memtool.DefaultMaxViewChars)
	if n := len([]rune(text)); n > memtool.DefaultMaxViewChars {
		t.Errorf("%d characters, more than %d", n, memtool.DefaultMaxViewChars)
	}
	for _, want := range []string{"5000 matching lines (the first 1000 of them below", "\n/memories/f.md:1:" + strings.Repeat("é", 500) + "…\n", "[Output cut at 16000 characters: showing 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %.80q", want)
		}
	}
	if got := claude.SearchText(memtool.SearchResult{}, 100); got != "No lines match." {
		t.Errorf("no match: %q", got)
	}
}
