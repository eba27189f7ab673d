package mcpserver_test

import (
	"io"
	"strings"
	"testing"
)

// TestStdioCallNamedInAnotherCase: a message whose method key is not in
// lower case is not a tools/call to the SDK (it reads names in their
// case, and answers nothing), so the calls after it are not held back
// waiting for its answer.
func TestStdioCallNamedInAnotherCase(t *testing.T) {
	mem := seeded(t)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i, odd := range []string{
		`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","params":` + create("upper.txt") + `}`,
		`{"jsonrpc":"2.0","id":2,"Method":"tools/call","params":` + create("title.txt") + `}`,
	} {
		io.WriteString(in, odd+"\n")
		id := []string{"11", "12"}[i]
		answer := exchange(t, in, out, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}}}`)
		if !strings.Contains(answer, `"id":`+id) {
			t.Errorf("the call after %s: %q", odd, answer)
		}
	}
	if l := listing(t, mem); strings.Contains(l, "upper.txt") || strings.Contains(l, "title.txt") {
		t.Errorf("a method key in another case ran: %s", l)
	}
}
