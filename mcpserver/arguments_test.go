package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestArgumentsRefused: duplicate, case-folded and unknown arguments of a
// tools/call are a tool error that says what is wrong, and change nothing.
func TestArgumentsRefused(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"w": {mem, true}}), nil)[0]
	for _, c := range []struct{ args, want string }{
		{`{"path":"/memories/d.txt","file_text":"x","file_text":"y"}`, "Error: Duplicate parameter 'file_text' in tool input"},
		{`{"path":"/memories/d.txt","file_text":"x","File_text":"y"}`, "Error: Parameters 'file_text' and 'File_text' differ only by case"},
		{`{"path":"/memories/d.txt","File_Text":"y"}`, "Error: Unknown parameter 'File_Text' (did you mean 'file_text'?)"},
		{`{"path":"/memories/d.txt","file_text":"x","mode":"append"}`, "Error: Unknown parameter 'mode' for memory_create (its parameters: file_text, path)"},
		{`{"path":"/memories/d.txt","file_text":"x","` + strings.Repeat("é", 5000) + `":1}`, "Error: Unknown parameter '" + strings.Repeat("é", 64) + "…' for memory_create (its parameters: file_text, path)"},
		{`{"path":"/memories/d.txt","file_text":"x","command":"delete"}`, "Error: Duplicate parameter 'command' in tool input"},
		{`{"path":"/memories/d.txt","file_text":"x","Command":"delete"}`, "Error: Parameters 'command' and 'Command' differ only by case"},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_create","arguments":` + c.args + `}}`
		resp, answer := post(t, url, body, map[string]string{"Authorization": "Bearer w"})
		var got struct {
			Result struct {
				Content []struct{ Text string }
				IsError bool
			}
		}
		if err := json.Unmarshal([]byte(answer), &got); err != nil || resp.StatusCode != 200 || !got.Result.IsError ||
			len(got.Result.Content) != 1 || got.Result.Content[0].Text != c.want {
			t.Errorf("%s: %d %s, want the tool error %q", c.args, resp.StatusCode, answer, c.want)
		}
	}
	if strings.Contains(listing(t, mem), "d.txt") {
		t.Error("a refused call created d.txt")
	}
	// str_replace with a misnamed new_str must not delete old_str.
	cs := httpSession(t, "w", url)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_str_replace", Arguments: map[string]any{"path": "/memories/a.txt", "old_str": "one", "new_text": "three"}})
	if err != nil || !res.IsError {
		t.Errorf("str_replace with new_text: %v %+v", err, res)
	}
	if r := mem.Run(context.Background(), []byte(`{"command":"view","path":"/memories/a.txt"}`)); !strings.Contains(r.Text, "one") {
		t.Errorf("a.txt after the refused str_replace: %q", r.Text)
	}
}
