// Package oauthtest is a local OAuth 2.1 authorization server for tests:
// its signing key is made in the test, and it publishes its metadata
// (RFC 8414 or OpenID Connect Discovery) and its key set over loopback,
// so that a resource server can be tested against real HTTP and real
// signatures without any outside service.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// An Issuer is a running test authorization server.
type Issuer struct {
	// URL is the issuer identifier, the "iss" of its tokens.
	URL string
	// KeysURL is where it publishes its key set (its jwks_uri).
	KeysURL string
	// Key signs its tokens; KeyID names it in the key set and in tokens.
	Key   *ecdsa.PrivateKey
	KeyID string

	fetches atomic.Int64

	mu    sync.Mutex
	extra []json.RawMessage // published after its own key; see Publish
}

// New starts an issuer whose identifier is its server's URL, publishing
// its metadata the RFC 8414 way. It stops when t ends.
func New(t testing.TB) *Issuer { return NewAt(t, "", false) }

// NewAt starts an issuer whose identifier has path after the host, and
// which publishes its metadata the OpenID Connect way (after the path) if
// openID, else RFC 8414's (the well-known part before the path).
func NewAt(t testing.TB, path string, openID bool) *Issuer {
	t.Helper()
	iss := &Issuer{Key: NewKey(t), KeyID: "k1"}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.URL = srv.URL + path
	iss.KeysURL = srv.URL + "/keys"
	meta := func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.KeysURL})
	}
	if openID {
		mux.HandleFunc(strings.TrimSuffix(path, "/")+"/.well-known/openid-configuration", meta)
	} else {
		mux.HandleFunc("/.well-known/oauth-authorization-server"+strings.TrimSuffix(path, "/"), meta)
	}
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		own, err := json.Marshal(jose.JSONWebKey{Key: &iss.Key.PublicKey, KeyID: iss.KeyID, Algorithm: "ES256", Use: "sig"})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		iss.mu.Lock()
		keys := append([]json.RawMessage{own}, iss.extra...)
		iss.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	return iss
}

// Publish adds keys, each a JSON Web Key as it is to appear, to the key
// set after the issuer's own key: keys of other kinds than a resource
// server understands, say, as a real issuer may publish beside its
// signing key.
func (iss *Issuer) Publish(keys ...string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	for _, k := range keys {
		iss.extra = append(iss.extra, json.RawMessage(k))
	}
}

// Fetches is how many times the key set was fetched.
func (iss *Issuer) Fetches() int { return int(iss.fetches.Load()) }

// Claims are the claims of a valid token for resource (its audience),
// naming tenant in the claim "tenant" and granting scope (space-separated),
// valid for an hour; "sub" is "user-1". Change them to make bad tokens.
func (iss *Issuer) Claims(resource, tenant, scope string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": iss.URL, "aud": []string{resource}, "sub": "user-1", "tenant": tenant, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

// Token is a JWT of claims signed with the issuer's key.
func (iss *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, iss.Key, iss.KeyID, claims)
}

// NewKey makes a P-256 signing key.
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Sign makes a JWT of claims signed (ES256) with key under the key id kid.
func Sign(t testing.TB, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
