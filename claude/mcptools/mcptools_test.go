package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/mcptools"
)

// serverEnv, when set, makes the test binary an MCP server on stdio.
const serverEnv = "MCPTOOLS_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type shoutIn struct {
	Text string `json:"text" jsonschema:"the text to shout"`
}

// newServer is an MCP server with two tools: shout, which upper-cases its
// text and reports whether it saw an ANTHROPIC_API_KEY, and fail, which
// fails.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Upper-cases text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in shoutIn) (*mcp.CallToolResult, any, error) {
			text := strings.ToUpper(in.Text)
			if os.Getenv("ANTHROPIC_API_KEY") != "" {
				text += " (saw the API key)"
			}
			if v := os.Getenv("SHOUT_SUFFIX"); v != "" {
				text += v
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	if os.Getenv("MCPTOOLS_TEST_DIE") != "" {
		mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Ends the server mid-call."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				os.Exit(3)
				return nil, nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "fail.now", Description: "Fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("it failed")
		})
	return s
}

func writeConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers, "globalShortcut": "Ctrl+Space"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A stdio server and an HTTP server from one configuration file, their
// tools run by the SDK's runner next to memory, against the fake API.
func TestRunnerWithServers(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "secret")
	var sawHeader string
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer() }, nil)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawHeader = r.Header.Get("X-Token")
		handler.ServeHTTP(w, r)
	}))
	defer web.Close()
	path := writeConfig(t, map[string]any{
		"local": map[string]any{"command": os.Args[0], "env": map[string]string{serverEnv: "1", "SHOUT_SUFFIX": "!"}},
		"web":   map[string]any{"type": "http", "url": web.URL, "headers": map[string]string{"X-Token": "t0k"}},
	})

	ctx := context.Background()
	servers, err := mcptools.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	var names []string
	for _, tool := range servers.Tools() {
		names = append(names, tool.Name())
	}
	if got := strings.Join(names, " "); got != "mcp__local__fail_now mcp__local__shout mcp__web__fail_now mcp__web__shout" {
		t.Errorf("tools: %s", got)
	}

	srv := run(t, servers, claudetest.Turn{Calls: []claudetest.ToolUse{
		{Name: "memory", Input: `{"command":"create","path":"/memories/a.md","file_text":"a"}`},
		{Name: "mcp__local__shout", Input: `{"text":"hello"}`},
		{Name: "mcp__web__shout", Input: `{"text":"web"}`},
		{Name: "mcp__local__fail_now", Input: `{}`},
	}})
	got := map[string]string{}
	for _, r := range srv.Requests()[1].ToolResults() {
		got[r.ToolUseID] = r.Text
		if r.IsError {
			got[r.ToolUseID] = "!" + r.Text
		}
	}
	for id, want := range map[string]string{
		"toolu_01_1": "File created successfully at: /memories/a.md",
		"toolu_01_2": "HELLO!",
		"toolu_01_3": "WEB (saw the API key)", // in this process, not a child
		"toolu_01_4": "!Error: it failed",
	} {
		if got[id] != want {
			t.Errorf("%s: %q, want %q", id, got[id], want)
		}
	}
	if sawHeader != "t0k" {
		t.Errorf("the http server got X-Token %q", sawHeader)
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := mcptools.ParseConfig([]byte(`{"mcpServers":{"a":{"command":"x"},"b":{"url":"http://h/mcp"},"c":{"type":"sse","url":"http://h/sse"}},"other":1}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "stdio", "b": "http", "c": "sse"} {
		if got := cfg.Servers[name].Type; got != want {
			t.Errorf("server %s: type %q, want %q", name, got, want)
		}
	}
	for _, bad := range []string{
		`{}`,
		`{"mcpServers":`,
		`{"mcpServers":{"a":{}}}`,
		`{"mcpServers":{"a":{"type":"http"}}}`,
		`{"mcpServers":{"a":{"type":"ws","url":"x"}}}`,
		`{"mcpServers":{"a b":{"command":"x"}}}`,
	} {
		if _, err := mcptools.ParseConfig([]byte(bad)); err == nil {
			t.Errorf("ParseConfig(%s) succeeded", bad)
		}
	}
}

// A server that cannot start fails Open with its name, and nothing stays open.
func TestOpenFails(t *testing.T) {
	path := writeConfig(t, map[string]any{"broken": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}})
	if _, err := mcptools.Open(context.Background(), path, nil); err == nil || !strings.Contains(err.Error(), `server "broken"`) {
		t.Errorf("Open: %v", err)
	}
	if _, err := mcptools.Open(context.Background(), filepath.Join(t.TempDir(), "missing.json"), nil); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

// Tools whose names differ only in characters the API refuses in a name
// ("fail.now" and "fail_now"), or whose server and tool names meet at a
// "__" (server "web" tool "x__y", server "web__x" tool "y"), still get
// names of their own, and each name calls its own tool.
func TestToolNamesUnique(t *testing.T) {
	newServer := func(names ...string) *httptest.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		for _, name := range names {
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Says its name."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil, nil
				})
		}
		web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(web.Close)
		return web
	}
	path := writeConfig(t, map[string]any{
		"web":    map[string]any{"url": newServer("fail.now", "fail_now", "x__y").URL},
		"web__x": map[string]any{"url": newServer("y").URL},
	})
	ctx := context.Background()
	servers, err := mcptools.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	seen := map[string]string{}
	for _, tool := range servers.Tools() {
		out, err := tool.Execute(ctx, json.RawMessage(`{}`))
		if err != nil || len(out) != 1 || out[0].OfText == nil {
			t.Fatalf("%s: %v %v", tool.Name(), out, err)
		}
		if other, ok := seen[tool.Name()]; ok {
			t.Errorf("tools %s and %s are both named %s", other, out[0].OfText.Text, tool.Name())
		}
		seen[tool.Name()] = out[0].OfText.Text
	}
	if len(seen) != 4 {
		t.Errorf("%d tool names for 4 tools: %v", len(seen), seen)
	}
}
