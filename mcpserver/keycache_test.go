package mcpserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// TestKeyCacheRefresh: the key set is fetched once and kept; a key ID not
// in it fetches it again, but not more than once per keysMinInterval; a set
// older than keysMaxAge is fetched again; a failed fetch keeps the old set
// and is not repeated before keysMinInterval.
// Time passes by moving the fetch time back.
func TestKeyCacheRefresh(t *testing.T) {
	ctx := context.Background()
	sets := map[string]*jose.JSONWebKeySet{}
	for _, kid := range []string{"k1", "k2"} {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		sets[kid] = &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: kid, Use: "sig"}}}
	}
	published, fetches := "k1", 0
	var fail error
	c := keyCache{fetch: func(context.Context) (*jose.JSONWebKeySet, error) {
		fetches++
		if fail != nil {
			return nil, fail
		}
		return sets[published], nil
	}}
	step := func(kid string, wantOK bool, wantFetches int) {
		t.Helper()
		_, err := c.get(ctx, kid)
		if (err == nil) != wantOK || fetches != wantFetches {
			t.Fatalf("get(%s): %v after %d fetches, want ok=%v after %d", kid, err, fetches, wantOK, wantFetches)
		}
	}
	step("k1", true, 1)
	step("k1", true, 1) // kept
	step("", true, 1)   // a token without kid and a set of one key
	published = "k2"    // the issuer rotates its key
	step("k2", false, 1)
	c.tried = c.tried.Add(-keysMinInterval - time.Second)
	step("k2", true, 2)
	step("k1", false, 2) // just fetched: not again
	fail = errors.New("issuer down")
	c.fetched, c.tried = c.fetched.Add(-keysMaxAge-time.Second), c.tried.Add(-keysMaxAge-time.Second)
	step("k2", true, 3) // stale, the fetch fails, the old set serves
	step("k2", true, 3) // and the issuer is not asked again at once

	// With no set at all, a failed fetch is an error, not ErrUnauthenticated,
	// and is not retried at once.
	c = keyCache{fetch: c.fetch}
	for range 2 {
		if _, err := c.get(ctx, "k2"); err == nil || errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("no keys: %v", err)
		}
	}
	if fetches != 4 {
		t.Errorf("%d fetches, want 4", fetches)
	}
}

// TestOAuthFetchTimeout: without an HTTPClient, the keys are fetched with
// a deadline, so an issuer that stops answering cannot hold requests.
func TestOAuthFetchTimeout(t *testing.T) {
	o, err := NewOAuth(OAuthConfig{Resource: "https://mem.example/mcp", Issuer: "https://auth.example"})
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.HTTPClient.Timeout != DefaultFetchTimeout {
		t.Errorf("the default client's timeout is %v, want %v", o.cfg.HTTPClient.Timeout, DefaultFetchTimeout)
	}
}

// TestKeyCacheFetchBlocksNoOne: while the key set is being fetched again
// (for a key ID not in it, which any client can send, signed or not), a
// token whose key is in the set is verified at once: it does not wait for
// the issuer, which may take up to DefaultFetchTimeout to answer or fail.
// (On failure this test does not return: the get waits for the fetch,
// which waits for the get.)
func TestKeyCacheFetchBlocksNoOne(t *testing.T) {
	ctx := context.Background()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Use: "sig"}}}
	var c keyCache
	first := true
	c.fetch = func(context.Context) (*jose.JSONWebKeySet, error) {
		if first {
			first = false
			return set, nil
		}
		// The issuer answers only once a token of a known key has been
		// verified.
		if _, err := c.get(ctx, "k1"); err != nil {
			t.Errorf("a known key while the set is fetched again: %v", err)
		}
		return set, nil
	}
	if _, err := c.get(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	c.tried = c.tried.Add(-keysMinInterval - time.Second)
	if _, err := c.get(ctx, "unknown"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("an unknown key: %v, want ErrUnauthenticated", err)
	}
}

// TestKeyCacheKeepsKeysOnEmptyAnswer: an issuer whose key set URL answers
// with a JSON document that is not a key set ({} from a proxy or a
// misconfigured route) has not published an empty set: the refresh fails
// and the keys fetched before keep serving, as after any failed fetch.
func TestKeyCacheKeepsKeysOnEmptyAnswer(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	var answer atomic.Value
	answer.Store(good)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(answer.Load().([]byte)) }))
	defer srv.Close()
	o, err := NewOAuth(OAuthConfig{Resource: "https://mem.example/mcp", Issuer: "https://auth.example", JWKSURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := o.keys.get(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	answer.Store([]byte(`{}`))
	o.keys.fetched, o.keys.tried = o.keys.fetched.Add(-keysMaxAge-time.Second), o.keys.tried.Add(-keysMaxAge-time.Second)
	if _, err := o.keys.get(ctx, "k1"); err != nil {
		t.Errorf("after the issuer answered {}: %v; want the key fetched before", err)
	}
}
