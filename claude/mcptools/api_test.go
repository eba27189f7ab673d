package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/mcptools"
	"github.com/memtool/memtool/memstore"
)

// serve serves s over streamable HTTP until the test ends and returns its URL.
func serve(t *testing.T, s *mcp.Server) string {
	t.Helper()
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(web.Close)
	return web.URL
}

// newRunner is a runner on an empty memory with the servers' tools, whose
// user says "Go.".
func newRunner(client *anthropic.Client, servers *mcptools.Tools) *anthropic.BetaToolRunner {
	return claude.NewRunner(client, memtool.New(memstore.New(), nil), anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Go."))},
		},
	}, servers.Option())
}

// run runs a runner with the servers' tools against a fake API that plays
// turns and then ends, and returns the fake, which refused nothing.
func run(t *testing.T, servers *mcptools.Tools, turns ...claudetest.Turn) *claudetest.Server {
	t.Helper()
	srv := claudetest.NewServer(append(turns, claudetest.Turn{Text: "Done."})...)
	t.Cleanup(srv.Close)
	client := srv.Client()
	runner := newRunner(&client, servers)
	if _, err := runner.RunToCompletion(context.Background()); err != nil {
		t.Fatalf("%v (refusals: %v)", err, srv.Refusals())
	}
	srv.CheckRefusals(t)
	return srv
}

func says(text string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
}

// MCP allows tool names of 128 characters, and the API takes 128 for the
// whole name: with "mcp__<server>__" ahead, a long name is cut, and names
// that are cut to one still get names of their own. A Config built by
// hand, not by ParseConfig, can name a server with characters the API
// refuses; they are replaced too.
func TestToolNamesFitTheAPI(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	long := strings.Repeat("t", 125)
	for _, name := range []string{long + "1", long + "2"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, says(name))
	}
	url := serve(t, s)
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{
		"long_server": {Type: "http", URL: url},
		"my.server":   {Type: "http", URL: url},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	pattern := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	seen := map[string]bool{}
	for _, tool := range servers.Tools() {
		if !pattern.MatchString(tool.Name()) || seen[tool.Name()] {
			t.Errorf("tool name %q (%d characters) is taken twice or refused by the API", tool.Name(), len(tool.Name()))
		}
		seen[tool.Name()] = true
	}
	run(t, servers)
}

// The API refuses an input_schema with oneOf, allOf or anyOf at its top
// level, which MCP servers publish; such a tool is still offered, and
// the model still learns of the constraint.
func TestSchemaWithTopLevelAnyOf(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "find", Description: "Finds by id or name.", InputSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"id": map[string]any{"type": "string"}, "name": map[string]any{"type": "string"}},
		"anyOf":      []any{map[string]any{"required": []any{"id"}}, map[string]any{"required": []any{"name"}}},
	}}, says("found"))
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{"s": {Type: "http", URL: serve(t, s)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	srv := run(t, servers, claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "mcp__s__find", Input: `{"id":"7"}`}}})
	var tools []struct{ Name, Description string }
	if err := json.Unmarshal(srv.Requests()[0].Tools, &tools); err != nil || len(tools) != 2 {
		t.Fatalf("tools %s: %v", srv.Requests()[0].Tools, err)
	}
	if !strings.Contains(tools[1].Description, `"anyOf":[{"required":["id"]},{"required":["name"]}]`) {
		t.Errorf("the declaration lost the anyOf constraint: %s", srv.Requests()[0].Tools)
	}
	if got := srv.Requests()[1].ToolResults(); len(got) != 1 || got[0].IsError || got[0].Text != "found" {
		t.Errorf("results: %+v", got)
	}
}

// A call whose result holds content the API cannot carry (a resource
// link, audio, an image of a type it does not take) ran: the model gets
// what can be shown and a note for the rest, never an error that says
// the call failed (it would call again).
func TestResultWithUnsupportedContent(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "make", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Made report.pdf."},
				&mcp.ResourceLink{URI: "file:///reports/report.pdf", Name: "report.pdf", MIMEType: "application/pdf"},
				&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
				&mcp.ImageContent{Data: []byte("<svg/>"), MIMEType: "image/svg+xml"},
			}}, nil
		})
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{"s": {Type: "http", URL: serve(t, s)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	srv := run(t, servers, claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "mcp__s__make", Input: `{}`}}})
	got := srv.Requests()[1].ToolResults()
	if len(got) != 1 || got[0].IsError {
		t.Fatalf("the call that ran is answered as failed: %d results, first %s", len(got), got[0].Raw)
	}
	for _, want := range []string{"Made report.pdf.", "file:///reports/report.pdf", "audio/wav", "image/svg+xml"} {
		if !strings.Contains(got[0].Text, want) {
			t.Errorf("the result %q lacks %q", got[0].Text, want)
		}
	}
}

// A stdio server that dies during a call: the model is told that call
// failed, and later calls to the server too, and the run goes on.
func TestServerDiesMidCall(t *testing.T) {
	path := writeConfig(t, map[string]any{
		"local": map[string]any{"command": os.Args[0], "env": map[string]string{serverEnv: "1", "MCPTOOLS_TEST_DIE": "1"}},
	})
	servers, err := mcptools.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	srv := run(t, servers,
		claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "mcp__local__die", Input: `{}`}}},
		claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "mcp__local__shout", Input: `{"text":"x"}`}}},
	)
	reqs := srv.Requests()
	for i, req := range reqs[1:3] {
		got := req.ToolResults()
		if len(got) != 1 || !got[0].IsError || !strings.HasPrefix(got[0].Text, "Error: ") {
			t.Errorf("request %d: results %s", i+2, got[0].Raw)
		}
	}
}

// A call that succeeds with an empty text item (a tool with nothing to
// say) is answered so that the API takes the request: it refuses an empty
// text block, in a tool_result too, and the run would stop there, every
// retry sending the same.
func TestResultWithEmptyText(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "clear", InputSchema: map[string]any{"type": "object"}}, says(""))
	s.AddTool(&mcp.Tool{Name: "note", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ""}, &mcp.TextContent{Text: "Noted."}}}, nil
		})
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{"s": {Type: "http", URL: serve(t, s)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	srv := run(t, servers, claudetest.Turn{Calls: []claudetest.ToolUse{
		{Name: "mcp__s__clear", Input: `{}`}, {Name: "mcp__s__note", Input: `{}`},
	}})
	got := srv.Requests()[1].ToolResults()
	if len(got) != 2 || got[0].IsError || got[1].IsError {
		t.Fatalf("results %+v; want two that did not fail", got)
	}
	if got[1].Text != "Noted." {
		t.Errorf("the second call's result reads %q, want %q", got[1].Text, "Noted.")
	}
}
