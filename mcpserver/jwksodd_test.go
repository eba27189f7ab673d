package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/memtool/memtool/internal/oauthtest"
)

// TestOAuthKeySetWithOddKeys: keys of the issuer's set that this server
// does not understand — a post-quantum key, an X25519 encryption key, an
// EC key on a curve it has no code for — are passed over, as RFC 7517 §5
// says, and the issuer's signing key is used: one odd key does not make
// every token fail (500 with no keys yet, or 401 for every rotated key
// with keys from before). A token that names an odd key is refused 401.
func TestOAuthKeySetWithOddKeys(t *testing.T) {
	iss := oauthtest.New(t)
	iss.Publish(
		`{"kty":"AKP","alg":"ML-DSA-44","kid":"pq","pub":"AAAA"}`,
		`{"kty":"OKP","crv":"X25519","use":"enc","kid":"x","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"}`,
		`{"kty":"EC","crv":"secp256k1","kid":"k256","x":"AAAA","y":"AAAA"}`,
	)
	s := newOAuthServer(t, iss, "")
	good := iss.Claims(s.resource, "alice", "memory:write")
	if resp, body := post(t, s.url, callView, map[string]string{"Authorization": "Bearer " + iss.Token(t, good)}); resp.StatusCode != 200 {
		t.Errorf("a valid token: %d %q", resp.StatusCode, body)
	}
	odd := oauthtest.Sign(t, oauthtest.NewKey(t), "k256", good)
	if resp, body := post(t, s.url, callView, map[string]string{"Authorization": "Bearer " + odd}); resp.StatusCode != 401 || !strings.Contains(body, "invalid_token") {
		t.Errorf("a token naming a key the server does not understand: %d %q, want 401", resp.StatusCode, body)
	}
}
