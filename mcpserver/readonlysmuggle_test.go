package mcpserver_test

import (
	"strings"
	"testing"
)

// A read-only identity's memory_view and memory_search whose arguments
// smuggle a command that writes (spelt with escapes, in another case,
// after the path, beside a query) change nothing.
func TestReadOnlySmuggledCommand(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"r": {mem, false}}), nil)[0]
	before := listing(t, mem)
	for _, args := range []string{
		`{"comm\u0061nd":"create","path":"/memories/z1.txt","file_text":"x"}`,
		`{"COMMAND":"create","path":"/memories/z2.txt","file_text":"x"}`,
		`{"path":"/memories/z3.txt","file_text":"x","command":"create"}`,
		`{"command":"delete","path":"/memories/a.txt"}`,
		`{"comm\u0061nd":"delete","path":"/memories/a.txt"}`,
		`{"Command":"delete","path":"/memories/a.txt"}`,
		`{"path":"/memories/a.txt","\u0063ommand":"delete"}`,
		`{"command":"create","path":"/memories/z4.txt","file_text":"x","query":"a"}`,
	} {
		for _, tool := range []string{"memory_view", "memory_search"} {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
			resp, answer := post(t, url, body, map[string]string{"Authorization": "Bearer r"})
			if strings.Contains(answer, "successfully") || strings.Contains(answer, "File created") {
				t.Errorf("%s %s: %d %.200s", tool, args, resp.StatusCode, strings.TrimSpace(answer))
			}
		}
	}
	if after := listing(t, mem); after != before {
		t.Errorf("read-only calls changed the memory:\n%s\nwas\n%s", after, before)
	}
}
