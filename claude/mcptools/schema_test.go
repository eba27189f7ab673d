package mcptools_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/mcptools"
)

// rawServer is a minimal MCP server over streamable HTTP that lists tools
// with whatever input schemas it is given, as a careless or hostile server
// may (the MCP Go SDK's own server refuses to publish them), and answers
// every call with "ran".
func rawServer(t *testing.T, schemas map[string]string) string {
	t.Helper()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		data, _ := io.ReadAll(r.Body)
		if json.Unmarshal(data, &req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "raw", "version": "1"}}
		case "tools/list":
			var tools []any
			for name, schema := range schemas {
				tools = append(tools, map[string]any{"name": name, "description": "A tool.", "inputSchema": json.RawMessage(schema)})
			}
			result = map[string]any{"tools": tools}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran"}}}
		default:
			result = map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(web.Close)
	return web.URL
}

// A server tool whose input schema is not an object schema (a type of
// "string", or a list of types) was declared with that type, which the API
// refuses: every request of the run failed, memory's calls too. It is
// declared as an object schema, the server's own type named in the
// description, and the call reaches the server.
func TestSchemaNotAnObject(t *testing.T) {
	url := rawServer(t, map[string]string{
		"plain":    `{"type":"string"}`,
		"nullable": `{"type":["object","null"],"properties":{"id":{"type":"string"}}}`,
	})
	servers, err := mcptools.Connect(context.Background(), &mcptools.Config{Servers: map[string]mcptools.Server{"s": {Type: "http", URL: url}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	srv := run(t, servers, claudetest.Turn{Calls: []claudetest.ToolUse{
		{Name: "mcp__s__plain", Input: `{}`},
		{Name: "mcp__s__nullable", Input: `{"id":"7"}`},
	}})
	var tools []struct {
		Name, Description string
		InputSchema       map[string]any `json:"input_schema"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Tools, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools[1:] {
		if tool.InputSchema["type"] != "object" || !strings.Contains(tool.Description, `"type":`) {
			t.Errorf("%s declared with schema %v, description %q", tool.Name, tool.InputSchema, tool.Description)
		}
	}
	if got := srv.Requests()[1].ToolResults(); len(got) != 2 || got[0].Text != "ran" || got[1].Text != "ran" {
		t.Errorf("results: %+v", got)
	}
}
