package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// closable is a tenant's store that Config.Release closes: any use after
// that is a test failure, and an error.
type closable struct {
	memtool.Forwarder
	s      memtool.Store
	closed atomic.Bool
	t      *testing.T
}

func (c *closable) check(op string) error {
	if c.closed.Load() {
		c.t.Errorf("%s on a store the server released", op)
		return fmt.Errorf("%s: closed", op)
	}
	return nil
}

func (c *closable) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	if err := c.check("Stat"); err != nil {
		return memtool.FileInfo{}, err
	}
	return c.s.Stat(ctx, name)
}

func (c *closable) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if err := c.check("ReadFile"); err != nil {
		return nil, err
	}
	return c.s.ReadFile(ctx, name, limit)
}

func (c *closable) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if err := c.check("ReadDir"); err != nil {
		return nil, err
	}
	return c.s.ReadDir(ctx, name)
}

func (c *closable) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := c.check("WriteFile"); err != nil {
		return err
	}
	return c.s.WriteFile(ctx, name, data, mode)
}

func (c *closable) Update(ctx context.Context, name string, limit int64, fn func([]byte) ([]byte, error)) error {
	if err := c.check("Update"); err != nil {
		return err
	}
	return c.s.Update(ctx, name, limit, fn)
}

func (c *closable) Mkdir(ctx context.Context, name string) error {
	if err := c.check("Mkdir"); err != nil {
		return err
	}
	return c.s.Mkdir(ctx, name)
}

func (c *closable) Remove(ctx context.Context, name string) error {
	if err := c.check("Remove"); err != nil {
		return err
	}
	return c.s.Remove(ctx, name)
}

// The tenants' memories are bounded in number and idleness: under 16
// clients over 6 tenants, the server releases memories (so the bound
// holds), never one a request still uses, keeps none over the bound once
// the requests end, and loses no change: each tenant's memory, opened
// again, holds every line its clients inserted.
func TestTenantsBounded(t *testing.T) {
	for _, c := range []struct {
		name string
		max  int
		idle time.Duration
	}{
		{"size", 2, time.Hour},
		{"idle", 1000, time.Nanosecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				mu       sync.Mutex
				data     = map[string]memtool.Store{} // each tenant's memory, kept over releases
				open     = map[*closable]bool{}
				opened   int
				released int
			)
			f := newFixture(t, func(cfg *server.Config) {
				cfg.MaxTenants, cfg.TenantIdle = c.max, c.idle
				cfg.Open = func(ctx context.Context, tenant string) (memtool.Store, error) {
					mu.Lock()
					defer mu.Unlock()
					if data[tenant] == nil {
						data[tenant] = memstore.New()
					}
					s := &closable{Forwarder: memtool.Forward(data[tenant], nil), s: data[tenant], t: t}
					open[s] = true
					opened++
					return s, nil
				}
				cfg.Release = func(tenant string, s memtool.Store) error {
					cs := s.(*closable)
					cs.closed.Store(true)
					mu.Lock()
					defer mu.Unlock()
					if !open[cs] {
						t.Errorf("tenant %s: a store released twice, or never opened", tenant)
					}
					delete(open, cs)
					released++
					return nil
				}
			})
			const tenants, clients, inserts = 6, 16, 25
			tokens := make([]string, tenants)
			for i := range tokens {
				_, tokens[i] = f.key(t, fmt.Sprintf("t%d", i), keys.Write)
				f.do(t, "POST", "/v1/memory", tokens[i], `{"command":"create","path":"/memories/log.md","file_text":"start\n"}`)
			}
			var wg sync.WaitGroup
			for cl := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range inserts {
						tok := tokens[(cl+i)%tenants]
						line := fmt.Sprintf("c%d-%d", cl, i)
						body := fmt.Sprintf(`{"command":"insert","path":"/memories/log.md","insert_line":1,"insert_text":%q}`, line+"\n")
						st, answer, err := postRaw(f.url, tok, body)
						if err != nil || st != 200 || !strings.Contains(answer, `"is_error":false`) {
							t.Errorf("insert %s: %d %s %v", line, st, answer, err)
						}
					}
				}()
			}
			wg.Wait()
			mu.Lock()
			if released == 0 {
				t.Errorf("no memory was released (%d opened)", opened)
			}
			if len(open) > c.max {
				t.Errorf("%d memories open after the requests ended, over the bound %d", len(open), c.max)
			}
			mu.Unlock()
			for cl := range clients {
				for i := range inserts {
					tok := tokens[(cl+i)%tenants]
					_, got, _ := postRaw(f.url, tok, `{"command":"view","path":"/memories/log.md"}`)
					if !strings.Contains(got, fmt.Sprintf("c%d-%d", cl, i)) {
						t.Errorf("line c%d-%d was lost", cl, i)
					}
				}
			}
		})
	}
}

func postRaw(base, token, body string) (int, string, error) {
	return postBody(base, token, strings.NewReader(body))
}

// postBody posts body to base's POST /v1/memory with token, and returns
// the status and the answer.
func postBody(base, token string, body io.Reader) (int, string, error) {
	req, err := http.NewRequest("POST", base+"/v1/memory", body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Failed authentications are limited per client address: past the
// burst, its requests with a token are 429 with Retry-After, before the
// token is checked (a good one too); another address is not limited.
func TestAuthFailuresLimited(t *testing.T) {
	f := newFixture(t, func(c *server.Config) { c.FailRate, c.FailBurst = 0.001, 3 })
	_, good := f.key(t, "alice", keys.Write)
	bad := "mt_0123456789abcdef_" + strings.Repeat("ab", 32)
	for i := range 3 {
		if r := f.do(t, "POST", "/v1/memory", bad, view); r.status != 401 {
			t.Fatalf("failure %d within the burst: %d, want 401", i, r.status)
		}
	}
	for _, tok := range []string{bad, good} {
		r := f.do(t, "POST", "/v1/memory", tok, view)
		if r.status != 429 || r.header.Get("Retry-After") == "" || r.header.Get("Retry-After") == "0" {
			t.Errorf("past the burst: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
		}
	}
	// From 127.0.0.2, another client address on loopback.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	req, _ := http.NewRequest("POST", f.url+"/v1/memory", strings.NewReader(view))
	req.Header.Set("Authorization", "Bearer "+good)
	resp, err := other.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a good key from another address: %d, want 200", resp.StatusCode)
	}
	if strings.Contains(f.log.String(), bad) {
		t.Errorf("a token was logged")
	}
}

// A tenant's memory left idle is closed past TenantIdle while Serve runs,
// even when no other request comes to trigger it.
func TestIdleTenantClosedWithoutTraffic(t *testing.T) {
	f := newFixture(t, nil)
	_, alice := f.key(t, "alice", keys.Write)
	released := make(chan string, 1)
	srv, err := server.New(server.Config{Keys: f.ring, Rate: -1, TenantIdle: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
		Open:   func(context.Context, string) (memtool.Store, error) { return memstore.New(), nil },
		Release: func(tenant string, _ memtool.Store) error {
			released <- tenant
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := listen(t, srv, "", "")
	defer func() {
		stop()
		<-done
	}()
	if st, answer, err := postRaw("http://"+addr, alice, view); err != nil || st != 200 {
		t.Fatalf("alice's view: %d %s %v", st, answer, err)
	}
	select {
	case tenant := <-released:
		if tenant != "alice" {
			t.Errorf("released %q, want alice", tenant)
		}
	case <-time.After(time.Minute):
		t.Error("alice's memory, idle, was not closed in a minute (TenantIdle 50ms)")
	}
}
