package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/mcpcalls"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/storeurl"
)

// TestTenantsOnBackends: on every backend, two tenants of one store are
// served over MCP: a fresh tenant lists no resources (its /memories
// exists before the first command), and what one tenant writes is not
// reached by the other through resources/list, resources/read (with
// traversal in its URI) or memory_search.
func TestTenantsOnBackends(t *testing.T) {
	ctx := context.Background()
	for _, b := range backendtest.All() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			sessions := map[string]*mcp.ClientSession{}
			for _, id := range []string{"alice", "bob"} {
				s, closer, err := storeurl.Open(ctx, url, &storeurl.Options{Tenant: id, Create: true})
				if err != nil {
					t.Skipf("tenant: %v", err)
				}
				t.Cleanup(func() { closer.Close() })
				sessions[id] = connect(t, memtool.New(s, nil), nil)
			}
			alice, bob := sessions["alice"], sessions["bob"]
			res, err := bob.ListResources(ctx, nil)
			if err != nil || len(res.Resources) != 0 {
				t.Fatalf("a fresh tenant's resources: %v %+v", err, res)
			}
			if r, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/secret.txt", "file_text": "PRIVATE"}}); err != nil || r.IsError {
				t.Fatalf("alice's create: %v %+v", err, r)
			}
			res, err = bob.ListResources(ctx, nil)
			if err != nil || len(res.Resources) != 0 {
				t.Errorf("bob's resources after alice's create: %v %+v", err, res)
			}
			for _, uri := range []string{
				"memory:///memories/secret.txt",
				"memory:///memories/../alice/secret.txt",
				"memory:///memories/%2e%2e/alice/secret.txt",
				"memory:///memories/..%2falice%2fsecret.txt",
				"memory:///memories/%2e%2e%2f%2e%2e%2falice%2fsecret.txt",
			} {
				r, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err == nil || strings.Contains(err.Error(), "PRIVATE") {
					t.Errorf("bob reads %s: %v %+v", uri, err, r)
				}
			}
			sr, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "PRIVATE"}})
			if err != nil || strings.Contains(mcpcalls.Result(t, sr).Text, "PRIVATE") {
				t.Errorf("bob's search: %v %+v", err, sr)
			}
			if r, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.ResourceURI("/memories/secret.txt")}); err != nil || r.Contents[0].Text != "PRIVATE" {
				t.Errorf("alice reads her file: %v %+v", err, r)
			}
		})
	}
}
