package keys_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// stores are the store URLs keys are kept for, each made fresh.
func stores(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"directory": func(t *testing.T) string { return filepath.Join(t.TempDir(), "memories") },
		"sqlite":    func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "m.db") },
		"postgres":  func(t *testing.T) string { return pgtest.URL(t) },
	}
}

func open(t *testing.T, url string, c *testclock.Clock) *keys.Keyring {
	t.Helper()
	k, err := keys.Open(context.Background(), url, &keys.Options{Create: true, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func TestKeyring(t *testing.T) {
	for name, mk := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			url := mk(t)
			c := testclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			a, b := open(t, url, c), open(t, url, c) // two replicas

			key, token, err := a.Add(ctx, keys.NewKey{Name: "ci", Tenant: "alice", Scope: keys.Write})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(token, "mt_"+key.ID+"_") || len(token) != len("mt_")+16+1+64 {
				t.Fatalf("token %q", token)
			}
			got, err := b.Verify(ctx, token)
			if err != nil || got.Tenant != "alice" || got.Scope != keys.Write || got.Name != "ci" || got.ID != key.ID {
				t.Fatalf("Verify on the other replica: %+v, %v", got, err)
			}
			for _, bad := range []string{"", "mt_", token[:len(token)-1], token[:len(token)-1] + "0", token + "0", "Bearer " + token, strings.ToUpper(token)} {
				if bad == token {
					continue
				}
				if _, err := b.Verify(ctx, bad); !errors.Is(err, keys.ErrInvalidToken) {
					t.Errorf("Verify(%q) = %v, want ErrInvalidToken", bad, err)
				}
			}

			// Expiry.
			c.Add(time.Millisecond)
			_, expiring, err := a.Add(ctx, keys.NewKey{Tenant: "bob", Scope: keys.Read, Expires: c.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Verify(ctx, expiring); err != nil {
				t.Fatal(err)
			}
			c.Add(time.Hour)
			if _, err := b.Verify(ctx, expiring); !errors.Is(err, keys.ErrInvalidToken) || !strings.Contains(err.Error(), "expired") {
				t.Errorf("an expired key: %v", err)
			}

			// Revocation: at once where revoked, within CacheFor elsewhere.
			if _, err := b.Verify(ctx, token); err != nil {
				t.Fatal(err)
			}
			if err := a.Revoke(ctx, key.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Verify(ctx, token); !errors.Is(err, keys.ErrInvalidToken) {
				t.Errorf("the revoking replica still takes a revoked key: %v", err)
			}
			c.Add(keys.DefaultCacheFor)
			if _, err := b.Verify(ctx, token); !errors.Is(err, keys.ErrInvalidToken) || !strings.Contains(err.Error(), "revoked") {
				t.Errorf("another replica, CacheFor after the revocation: %v", err)
			}
			if err := a.Revoke(ctx, key.ID); err != nil {
				t.Errorf("revoking twice: %v", err)
			}
			if err := a.Revoke(ctx, "0123456789abcdef"); !errors.Is(err, keys.ErrNotFound) {
				t.Errorf("revoking an unknown id: %v", err)
			}

			list, err := b.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].ID != key.ID || list[0].Revoked.IsZero() || list[1].Tenant != "bob" || list[1].Expires.IsZero() {
				t.Errorf("List = %+v", list)
			}
		})
	}
}

// Bad input changes nothing.
func TestAddRefuses(t *testing.T) {
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "memories")
	c := testclock.New(time.Now())
	k := open(t, url, c)
	for _, nk := range []keys.NewKey{
		{Tenant: "", Scope: keys.Read},
		{Tenant: "Alice", Scope: keys.Read},
		{Tenant: "../x", Scope: keys.Read},
		{Tenant: "a", Scope: 0},
		{Tenant: "a", Scope: keys.Read, Name: "a\nb"},
		{Tenant: "a", Scope: keys.Read, Name: "a\u009b31mb"}, // a C1 control: CSI, to a terminal showing keys list
		{Tenant: "a", Scope: keys.Read, Name: "a\x85b"},      // not UTF-8 (NEL's code in Latin-1)
		{Tenant: "a", Scope: keys.Read, Name: "ci\u202eyek"}, // a bidi override: keys list would show "ci" then "key" reversed
		{Tenant: "a", Scope: keys.Read, Name: "a\u200bb"},    // a zero-width space: two names that look the same
		{Tenant: "a", Scope: keys.Read, Expires: c.Now().Add(-time.Second)},
	} {
		if _, _, err := k.Add(ctx, nk); err == nil {
			t.Errorf("Add(%+v) succeeded", nk)
		}
	}
	if list, err := k.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List = %v, %v", list, err)
	}
}

// Keys added at once by several processes' keyrings on one directory all
// land: none is lost to another's rewrite of the file.
func TestDirectoryNoLostKey(t *testing.T) {
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "memories")
	c := testclock.New(time.Now())
	var wg sync.WaitGroup
	tokens := make([]string, 16)
	for i := range tokens {
		k := open(t, url, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, tok, err := k.Add(ctx, keys.NewKey{Tenant: fmt.Sprintf("t%d", i), Scope: keys.Read})
			if err != nil {
				t.Error(err)
			}
			tokens[i] = tok
		}()
	}
	wg.Wait()
	k := open(t, url, c)
	for i, tok := range tokens {
		if got, err := k.Verify(ctx, tok); err != nil || got.Tenant != fmt.Sprintf("t%d", i) {
			t.Errorf("key %d: %+v, %v", i, got, err)
		}
	}
	// The file is beside the directory, private, and holds no token.
	data, err := os.ReadFile(url + ".keys")
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(url + ".keys")
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("key file mode %v", fi.Mode())
	}
	for _, tok := range tokens {
		if strings.Contains(string(data), tok[len(tok)-64:]) {
			t.Error("the key file holds a secret")
		}
	}
}

func TestNoKeysInOtherStores(t *testing.T) {
	_, err := keys.Open(context.Background(), "mem:", nil)
	if err == nil || !strings.Contains(err.Error(), "keeps no API keys") {
		t.Errorf("mem: %v", err)
	}
	_, err = keys.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "missing.db"), nil)
	if !errors.Is(err, os.ErrNotExist) && (err == nil || !strings.Contains(err.Error(), "no such file")) {
		t.Errorf("a missing SQLite file without Create: %v", err)
	}
}

// Errors never show a password of the store URL.
func TestOpenErrorHidesPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := keys.Open(ctx, "postgres://u:sekrit@127.0.0.1:1/db?connect_timeout=2", nil)
	if err == nil || strings.Contains(err.Error(), "sekrit") {
		t.Errorf("error %v", err)
	}
}

// TestPoolParameters: the keyring opens on every PostgreSQL store URL the
// store itself opens, pgxpool's pool_* parameters included (memtool serve
// opens its keys on the --store URL), and keeps keys there.
func TestPoolParameters(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t) + "&pool_max_conns=3&pool_min_conns=1"
	s, err := pgstore.Open(ctx, url, nil)
	if err != nil {
		t.Fatalf("the store does not open its URL: %v", err)
	}
	defer s.Close()
	k := open(t, url, testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	_, token, err := k.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Read})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Verify(ctx, token); err != nil {
		t.Fatal(err)
	}
}

// A keyring opened without Create for a directory store that is not there
// is an error, as for a missing SQLite file: a mistyped store is no empty
// keyring. One that is there, without a key file, holds no keys.
func TestOpenMissingDirStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memories")
	if _, err := keys.Open(t.Context(), dir, nil); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open of a directory store that is not there: %v; want an error that says it does not exist", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ring, err := keys.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	if list, err := ring.List(t.Context()); err != nil || len(list) != 0 {
		t.Errorf("keys of a store without a key file: %v, %v", list, err)
	}
}
