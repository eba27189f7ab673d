package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The multi-session pattern with hands, as a user runs it: two memtool run
// processes on one memory and one --workdir. Session 1 records its plan
// and writes the work; session 2 reads memory first, continues, and is
// refused a write outside the work directory and a write into the memory
// directory that lies inside it.
func TestRunWithWorkdir(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	store := filepath.Join(work, "memories") // inside the work directory: read-only to the file tools
	outside := filepath.Join(t.TempDir(), "outside.txt")

	srv1 := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"create","path":"/memories/progress.md","file_text":"- [ ] login page\n"}`},
			{Input: `{"command":"create","path":"/memories/features.md","file_text":"- login page\n- logout page\n"}`},
			{Name: "write", Input: `{"file_path":"login.html","content":"<form>login</form>\n"}`},
		}},
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"str_replace","path":"/memories/progress.md","old_str":"- [ ] login page","new_str":"- [x] login page"}`},
		}},
		claudetest.Turn{Text: "Login page done."},
	)
	defer srv1.Close()
	_, errOut, code := runMemtool(t, apiEnv(srv1), "", "run", "--store", store, "--workdir", work, "Add the login page.")
	if code != 0 {
		t.Fatalf("session 1: exit %d\n%s", code, errOut)
	}
	if err := srv1.Refusals(); err != nil {
		t.Fatal(err)
	}
	if got := srv1.Requests()[0].Tools; !strings.Contains(string(got), `"write"`) || strings.Contains(string(got), `"bash"`) {
		t.Errorf("session 1 declares %s: want the file tools and no bash", got)
	}

	srv2 := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"view","path":"/memories/progress.md"}`},
			{Input: `{"command":"view","path":"/memories/features.md"}`},
			{Name: "read", Input: `{"file_path":"login.html"}`},
		}},
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Name: "write", Input: `{"file_path":"` + outside + `","content":"escaped\n"}`},
			{Name: "write", Input: `{"file_path":"memories/progress.md","content":"overwritten\n"}`},
			{Name: "write", Input: `{"file_path":"logout.html","content":"<form>logout</form>\n"}`},
		}},
		claudetest.Turn{Text: "Logout page done."},
	)
	defer srv2.Close()
	_, errOut, code = runMemtool(t, apiEnv(srv2), "", "run", "--store", store, "--workdir", work, "Continue.")
	if code != 0 {
		t.Fatalf("session 2: exit %d\n%s", code, errOut)
	}
	if err := srv2.Refusals(); err != nil {
		t.Fatal(err)
	}
	var second string // the conversation's text, JSON escapes undone
	for _, m := range srv2.Requests()[1].Messages {
		var v any
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatal(err)
		}
		second += fmt.Sprint(v)
	}
	for _, want := range []string{"- [x] login page", "- logout page", "<form>login</form>"} {
		if !strings.Contains(second, want) {
			t.Errorf("session 2 did not read %q from session 1", want)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a write outside the work directory landed")
	}
	for name, want := range map[string]string{
		"login.html":           "<form>login</form>\n",
		"logout.html":          "<form>logout</form>\n",
		"memories/progress.md": "- [x] login page\n",
	} {
		if data, err := os.ReadFile(filepath.Join(work, name)); err != nil || string(data) != want {
			t.Errorf("%s = %q, %v; want %q", name, data, err, want)
		}
	}
}

// --mcp-config adds an MCP server's tools: a streamable-HTTP server in this
// process, named in a Claude Desktop-shaped file, called by the model next
// to memory.
func TestRunWithMCPConfig(t *testing.T) {
	t.Parallel()
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "shout", Description: "Upper-cases text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer web.Close()
	config := filepath.Join(t.TempDir(), "mcp.json")
	data := `{"mcpServers": {"web": {"type": "http", "url": "` + web.URL + `"}}}`
	if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}

	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"create","path":"/memories/a.md","file_text":"a"}`},
			{Name: "mcp__web__shout", Input: `{"text":"hello"}`},
		}},
		claudetest.Turn{Text: "Done."},
	)
	defer srv.Close()
	_, errOut, code := runMemtool(t, apiEnv(srv), "", "run", "--store", filepath.Join(t.TempDir(), "m"), "--mcp-config", config, "Shout.")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if err := srv.Refusals(); err != nil {
		t.Fatal(err)
	}
	if tools := string(srv.Requests()[0].Tools); !strings.Contains(tools, "mcp__web__shout") {
		t.Errorf("the request declares %s", tools)
	}
	results := srv.Requests()[1].ToolResults()
	if len(results) != 2 || results[1].IsError || results[1].Text != "HELLO" {
		t.Errorf("the MCP tool's result did not reach the model: %+v", results)
	}
}

// --allow-bash adds the bash tool and says on stderr that it is not confined.
func TestAllowBashWarns(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(claudetest.Turn{Text: "Nothing to do."})
	defer srv.Close()
	_, errOut, code := runMemtool(t, apiEnv(srv), "", "run", "--store", filepath.Join(t.TempDir(), "m"), "--workdir", t.TempDir(), "--allow-bash", "Look.")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "warning: --allow-bash gives Claude an unrestricted shell") {
		t.Errorf("no warning on stderr:\n%s", errOut)
	}
	if tools := string(srv.Requests()[0].Tools); !strings.Contains(tools, `"bash"`) {
		t.Errorf("the request declares %s, without bash", tools)
	}
}
