// Package mcpcalls holds what the tests of memtool's MCP server share,
// in process (mcpserver) and through the binary (cmd/memtool): the calls
// that change the memory, and the reading of a call's result.
package mcpcalls

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/mcpserver"
)

// Writes returns a call of every tool that changes the memory, each of
// which succeeds, in this order, with write access to a memory holding
// /memories/a.txt with the text "one\ntwo" (but the rename: the delete
// before it removed a.txt).
func Writes() []mcp.CallToolParams {
	return []mcp.CallToolParams{
		{Name: "memory_create", Arguments: map[string]any{"path": "/memories/new.txt", "file_text": "x"}},
		{Name: "memory_str_replace", Arguments: map[string]any{"path": "/memories/a.txt", "old_str": "one", "new_str": "ONE"}},
		{Name: "memory_insert", Arguments: map[string]any{"path": "/memories/a.txt", "insert_line": 0, "insert_text": "zero"}},
		{Name: "memory_delete", Arguments: map[string]any{"path": "/memories/a.txt"}},
		{Name: "memory_rename", Arguments: map[string]any{"old_path": "/memories/a.txt", "new_path": "/memories/b.txt"}},
	}
}

// Result is the tool result res carries, as memtool.Memory answered it;
// t fails at once if res is not one.
func Result(t testing.TB, res *mcp.CallToolResult) memtool.Result {
	t.Helper()
	r, err := mcpserver.ResultOf(res)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
