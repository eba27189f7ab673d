package mcpserver_test

import (
	"io"
	"strings"
	"testing"
)

// TestStdioMessageWithoutVersion: a JSON object that is no JSON-RPC 2.0
// message (its "jsonrpc" missing, in another case, or another version)
// is answered Invalid Request, and the session goes on, as the
// transport's doc promises of every message that is JSON (the SDK's
// reader would end the session).
func TestStdioMessageWithoutVersion(t *testing.T) {
	mem := seeded(t)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i, odd := range []string{
		`{"id":1,"method":"ping"}`,
		`{"JSONRPC":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`,
		`{"jsonrpc":2,"id":4,"method":"ping"}`,
	} {
		answer := exchange(t, in, out, odd)
		if !strings.Contains(answer, `"code":-32600`) {
			t.Errorf("%s: %q, want Invalid Request", odd, answer)
		}
		id := []string{"11", "12", "13", "14"}[i]
		if answer := exchange(t, in, out, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`); !strings.Contains(answer, `"id":`+id) {
			t.Fatalf("a ping after %s: %q; the session ended", odd, answer)
		}
	}
}
