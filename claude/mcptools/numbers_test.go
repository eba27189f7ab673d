package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/mcptools"
)

// echoServer has one tool, echo, that answers the arguments it received,
// as they reached it.
func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	schema := &mcp.Tool{Name: "echo", Description: "Answers its arguments.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	s.AddTool(schema, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	return s
}

// The arguments a model gives an MCP tool reach its server with the
// values the model wrote: an integer too large for a float64 to hold
// exactly (a 64-bit id, say) is not rounded on the way, through RunTools
// and through the SDK's runner.
func TestArgumentsKeepTheirNumbers(t *testing.T) {
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echoServer() }, nil))
	defer web.Close()
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{"e": {Type: "http", URL: web.URL}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	const input = `{"id":1234567890123456789,"big":123456789012345678901234567890,"x":0.1}`
	wants := []string{`"id":1234567890123456789`, `"big":123456789012345678901234567890`, `"x":0.1`}

	var msg anthropic.BetaMessage
	data := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"mcp__e__echo","input":%s}],"stop_reason":"tool_use"}`, input)
	if err := json.Unmarshal([]byte(data), &msg); err != nil {
		t.Fatal(err)
	}
	results := claude.RunTools(context.Background(), &msg, servers.Tools()...)
	if len(results) != 1 || len(results[0].OfToolResult.Content) != 1 {
		t.Fatalf("results: %+v", results)
	}
	got := results[0].OfToolResult.Content[0].OfText.Text
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("RunTools: the server got %s, want %s in it", got, want)
		}
	}

	// Two calls whose ids round to one float64, which the runner passes
	// the same input: neither may get the other's answer.
	twins := []string{`{"id":1234567890123456788}`, `{"id":1234567890123456787}`}
	srv := run(t, servers, claudetest.Turn{Calls: []claudetest.ToolUse{
		{ID: "toolu_a", Name: "mcp__e__echo", Input: input},
		{ID: "toolu_b", Name: "mcp__e__echo", Input: twins[0]},
		{ID: "toolu_c", Name: "mcp__e__echo", Input: twins[1]},
	}})
	res := map[string]string{}
	for _, r := range srv.Requests()[1].ToolResults() {
		res[r.ToolUseID] = r.Text
	}
	for _, want := range wants {
		if !strings.Contains(res["toolu_a"], want) {
			t.Errorf("runner: the server got %s, want %s in it", res["toolu_a"], want)
		}
	}
	if strings.Contains(res["toolu_b"], twins[1]) || strings.Contains(res["toolu_c"], twins[0]) {
		t.Errorf("the twins' answers were swapped: %q to %s, %q to %s", res["toolu_b"], twins[0], res["toolu_c"], twins[1])
	}
}
