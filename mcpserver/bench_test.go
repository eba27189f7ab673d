package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCall is one memory_view call of a small file: in memory, and
// over HTTP on loopback, where each request builds its server (stateless).
func BenchmarkCall(b *testing.B) {
	t := b
	view := &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": "/memories/a.txt"}}
	for _, c := range []struct {
		name    string
		session func() *mcp.ClientSession
	}{
		{"inmemory", func() *mcp.ClientSession { return connect(t, seeded(t), nil) }},
		{"http", func() *mcp.ClientSession {
			return httpSession(t, "w", serve(t, 1, staticTokens(map[string]access{"w": {seeded(t), true}}), nil)...)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cs := c.session()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), view)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
