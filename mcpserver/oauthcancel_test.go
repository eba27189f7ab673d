package mcpserver_test

import (
	"context"
	"testing"

	"github.com/memtool/memtool/internal/oauthtest"
	"github.com/memtool/memtool/mcpserver"
)

// TestOAuthCancelledFetch: a request that ends (its client hung up) while
// its token makes the server fetch the issuer's keys does not spoil the
// fetch for the others: the next valid token is accepted at once, not
// refused until the next fetch is due (keysMinInterval later), which any
// client, with no valid token, could otherwise do again and again.
func TestOAuthCancelledFetch(t *testing.T) {
	iss := oauthtest.New(t)
	const resource = "https://mem.example/mcp"
	o, err := mcpserver.NewOAuth(mcpserver.OAuthConfig{Resource: resource, Issuer: iss.URL, TenantClaim: "tenant"})
	if err != nil {
		t.Fatal(err)
	}
	tok := iss.Token(t, iss.Claims(resource, "alice", "memory:write"))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	o.Verify(gone, tok) // whatever it answers
	if g, err := o.Verify(context.Background(), tok); err != nil || g.Tenant != "alice" {
		t.Fatalf("a valid token after a cancelled request: %+v, %v", g, err)
	}
}
