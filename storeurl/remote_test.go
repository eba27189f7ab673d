package storeurl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/storeurl"
)

// memoryServer serves a memstore over the resource API on loopback to
// requests with token, and returns its URL and the store.
func memoryServer(t *testing.T, token string) (string, memtool.Store) {
	t.Helper()
	inner := memstore.New()
	return remotetest.Server(t, inner, token), inner
}

// TestOpenRemote: an http(s) URL opens the memory of a memtool server
// with the token in $MEMTOOL_TOKEN; a wrong token fails Open, saying what
// to fix, without showing the token.
func TestOpenRemote(t *testing.T) {
	const token = "the-right-token-123"
	url, inner := memoryServer(t, token)
	t.Setenv(remotestore.TokenEnv, token)
	s := open(t, url, nil)
	if err := s.WriteFile(t.Context(), "a.md", []byte("hello"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if data, err := inner.ReadFile(t.Context(), "a.md", 100); string(data) != "hello" || err != nil {
		t.Fatalf("the server's store holds %q, %v", data, err)
	}
	if got := storeurl.Kind(url); got != "a memtool server" {
		t.Errorf("Kind = %q", got)
	}
	if help := strings.Join(storeurl.Schemes(), "\n"); !strings.Contains(help, "https:") || !strings.Contains(help, remotestore.TokenEnv) {
		t.Errorf("Schemes() does not show the remote form:\n%s", help)
	}
	if empty, err := storeurl.IsEmpty(t.Context(), url, ""); empty || err != nil {
		t.Errorf("IsEmpty = %v, %v", empty, err)
	}

	const wrong = "wrong-token-456"
	t.Setenv(remotestore.TokenEnv, wrong)
	_, _, err := storeurl.Open(t.Context(), url, nil)
	if err == nil || !strings.Contains(err.Error(), "$"+remotestore.TokenEnv) || strings.Contains(err.Error(), wrong) {
		t.Fatalf("Open with a wrong token: %v", err)
	}
	if _, _, err := storeurl.Open(t.Context(), "http://memory.example.com", nil); err == nil {
		t.Error("Open sent a token over plain http to another machine")
	}
	if _, _, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: "a"}); err == nil {
		t.Error("Open gave a tenant of a remote store (the key names the tenant)")
	}
	t.Setenv(remotestore.TokenEnv, token)
	// A server without /v1/tenants is one memory to its keys.
	if _, err := storeurl.Tenants(t.Context(), url); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenants of a remote store that lists none: %v", err)
	}
}
