package mcptools_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/mcptools"
)

// An MCP call whose step's context ended after the server made the change,
// before its answer came back, may have been made. When the runner's step
// is run again, the SDK runs the turn's calls again: that call must not
// reach the server a second time (the line would be added twice), and the
// model must be told what it was told the first time.
func TestRetriedStepDoesNotRepeatACallThatRan(t *testing.T) {
	step, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var lines []string
	s := mcp.NewServer(&mcp.Implementation{Name: "log", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a line to the log."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in shoutIn) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			lines = append(lines, in.Text)
			first := len(lines) == 1
			mu.Unlock()
			if first {
				cancel()     // the step ends once the change is made ...
				<-ctx.Done() // ... and the client gives up on its answer
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil, nil
		})
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{
		"log": {Type: "http", URL: serve(t, s)},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()

	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "mcp__log__add", Input: `{"text":"one"}`}}},
		claudetest.Turn{Text: "Done."},
	)
	defer srv.Close()
	client := srv.Client()
	runner := newRunner(&client, servers)
	if _, err := runner.NextMessage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.NextMessage(step); err == nil {
		t.Fatal("the step ran to its end with a cancelled context")
	}
	_, retryErr := runner.NextMessage(context.Background())

	mu.Lock()
	if len(lines) != 1 {
		t.Errorf("the server ran the call %d times (%q), want once", len(lines), lines)
	}
	mu.Unlock()
	if retryErr != nil {
		t.Errorf("the retried step: %v", retryErr)
	}
	srv.CheckRefusals(t)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests reached the API, want 2", len(reqs))
	}
	// Not that the call failed, as "context canceled" reads: it may have
	// been made.
	if got := reqs[1].ToolResults(); len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Text, "may or may not have been made") {
		var texts []string
		for _, r := range got {
			texts = append(texts, r.Text)
		}
		t.Errorf("the model was told %q; want once that the call may or may not have been made", texts)
	}
}
