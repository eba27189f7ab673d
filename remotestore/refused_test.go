package remotestore_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server"
	"github.com/memtool/memtool/server/resource"
)

// keyedServer is a real memtool server as memtool serve runs it (keys in
// an SQLite keyring, its rate limit, the resource API mounted, the list of
// tenants) over one memstore per tenant, with edit applied to its
// configuration.
func keyedServer(t *testing.T, edit func(*server.Config)) (string, *keys.Keyring, map[string]memtool.Store) {
	t.Helper()
	ring, err := keys.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "keys.db"), &keys.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ring.Close() })
	var mu sync.Mutex
	stores := map[string]memtool.Store{}
	var srv *server.Server
	res := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
		mem, canWrite, err := srv.Memory(r)
		if err != nil {
			return nil, false, err
		}
		return mem.Store(), canWrite, nil
	}, nil)
	mount := res.Mount()
	cfg := server.Config{
		Keys: ring,
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			mu.Lock()
			defer mu.Unlock()
			if stores[tenant] == nil {
				stores[tenant] = memstore.New()
			}
			return stores[tenant], nil
		},
		Tenants: func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			return slices.Sorted(maps.Keys(stores)), nil
		},
		Mount:  mount,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err = server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL, ring, stores
}

// The two answers a memtool server gives before it looks at a request
// reach the model as what they are, not as an internal error: the key's
// rate limit (429, with the wait in seconds from Retry-After) and a
// revoked key (401). Nothing was changed either way.
func TestRefusedBeforeLooking(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*server.Config)
		// prepare spends the rate's burst, or revokes the key
		prepare func(t *testing.T, ring *keys.Keyring, id string, s *remotestore.Store)
		want    string
	}{
		{"rate limit", func(c *server.Config) { c.Rate, c.Burst = 0.0001, 1 },
			func(t *testing.T, _ *keys.Keyring, _ string, s *remotestore.Store) { s.Stat(t.Context(), "") },
			"Error: The memory server is limiting how often this app's key may call it (HTTP 429); nothing was changed. Try again in 10000 s"},
		{"revoked key", func(c *server.Config) { c.Rate = -1 },
			func(t *testing.T, ring *keys.Keyring, id string, _ *remotestore.Store) {
				if err := ring.Revoke(t.Context(), id); err != nil {
					t.Fatal(err)
				}
			},
			"Error: The memory server did not accept this app's key (HTTP 401: it may be revoked or expired); nothing was changed. The user must give the app a valid key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, ring, stores := keyedServer(t, c.edit)
			k, tok, err := ring.Add(t.Context(), keys.NewKey{Tenant: "alice", Scope: keys.Write})
			if err != nil {
				t.Fatal(err)
			}
			s, err := remotestore.Open(url, &remotestore.Options{Token: tok})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c.prepare(t, ring, k.ID, s)
			res := memtool.New(s, nil).Run(t.Context(), []byte(`{"command":"create","path":"/memories/x.md","file_text":"x"}`))
			if !res.IsError || res.Text != c.want {
				t.Errorf("the model read %q, want %q", res.Text, c.want)
			}
			if strings.Contains(res.Text, tok) {
				t.Error("the answer shows the token")
			}
			if st := stores["alice"]; st != nil {
				if _, err := st.Stat(t.Context(), "x.md"); err == nil {
					t.Error("x.md was made")
				}
			}
		})
	}
}
