package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// TestRevokedKeyEndsSession: the server keeps no session, so a client's
// session whose key is revoked meanwhile is refused at its next call (401
// invalid_token), which changes nothing.
func TestRevokedKeyEndsSession(t *testing.T) {
	ctx := context.Background()
	ring, err := keys.Open(ctx, t.TempDir(), &keys.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	key, token, err := ring.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Write})
	if err != nil {
		t.Fatal(err)
	}
	mem := memtool.New(memstore.New(), nil)
	open := func(r *http.Request) (*memtool.Memory, bool, error) {
		k, err := ring.Verify(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if errors.Is(err, keys.ErrInvalidToken) {
			return nil, false, mcpserver.ErrUnauthenticated
		}
		return mem, k.Scope >= keys.Write, err
	}
	url := serve(t, 1, open, nil)[0]
	cs := httpSession(t, token, url)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/before.txt", "file_text": "x"}}); err != nil || res.IsError {
		t.Fatalf("before the revocation: %v %+v", err, res)
	}
	if err := ring.Revoke(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_create", Arguments: map[string]any{"path": "/memories/after.txt", "file_text": "x"}}); err == nil {
		t.Errorf("the session after its key was revoked: %+v", res)
	}
	resp, body := post(t, url, callView, map[string]string{"Authorization": "Bearer " + token})
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || got != `Bearer realm="memtool", error="invalid_token"` || strings.Contains(body, token) {
		t.Errorf("a revoked key: %d %q, WWW-Authenticate %q", resp.StatusCode, body, got)
	}
	if l := listing(t, mem); !strings.Contains(l, "before.txt") || strings.Contains(l, "after.txt") {
		t.Errorf("after the revocation:\n%s", l)
	}
}
