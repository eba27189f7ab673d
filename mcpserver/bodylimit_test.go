package mcpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// TestHTTPBodyTooLarge: a body over the limit is answered 413, saying so,
// whether its length is declared or it comes in chunks, and changes
// nothing; a body within it is served.
func TestHTTPBodyTooLarge(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"w": {mem, true}}), nil)[0]
	create := func(text string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/big.txt","file_text":"` + text + `"}}}`
	}
	big := create(strings.Repeat("x", 2*memtool.MaxInputBytes))
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(body) // hides the length: sent in chunks
		}
		resp, b := send(t, "POST", url, body, map[string]string{"Authorization": "Bearer w", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "too large") {
			t.Errorf("chunked=%v: %d %q, want 413 saying the body is too large", chunked, resp.StatusCode, b)
		}
	}
	if r := mem.Run(t.Context(), []byte(`{"command":"view","path":"/memories/big.txt"}`)); !r.IsError {
		t.Errorf("a refused body made big.txt: %s", r.Text)
	}
	resp, body := post(t, url, create("small"), map[string]string{"Authorization": "Bearer w", "Mcp-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != 200 || !strings.Contains(body, "created") {
		t.Errorf("a body within the limit: %d %q", resp.StatusCode, body)
	}
}
