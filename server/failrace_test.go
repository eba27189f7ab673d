package server_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
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

// slowRefusals is a Verifier that refuses every token, slowly: it waits
// until n tokens are being checked at once, or a while.
type slowRefusals struct {
	n       int32
	checked atomic.Int32
	all     chan struct{}
	once    sync.Once
}

func (v *slowRefusals) Verify(ctx context.Context, token string) (keys.Key, error) {
	if v.checked.Add(1) == v.n {
		v.once.Do(func() { close(v.all) })
	}
	select {
	case <-v.all:
	case <-time.After(500 * time.Millisecond):
	}
	return keys.Key{}, keys.ErrInvalidToken
}

// Failed authentications checked at once count as those checked one after
// another: tokens that arrive together are all checked (whether one fails
// is known only once it is checked), but each failure past the burst is
// paid for by waiting, so that the address makes no more than the burst
// and one a second (FailRate) over time, however many arrive together.
func TestAuthFailuresLimitedConcurrently(t *testing.T) {
	const clients = 16
	v := &slowRefusals{n: clients, all: make(chan struct{})}
	srv, err := server.New(server.Config{Keys: v, FailRate: 1, FailBurst: 2, Logger: slog.New(slog.DiscardHandler),
		Open: func(context.Context, string) (memtool.Store, error) { return memstore.New(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	try := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/v1/memory", strings.NewReader(view))
		req.RemoteAddr = "192.0.2.1:1234"
		req.Header.Set("Authorization", "Bearer mt_0123456789abcdef_"+strings.Repeat("ab", 32))
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w
	}
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() { try() })
	}
	wg.Wait()
	checked := int(v.checked.Load())
	w := try()
	wait, _ := strconv.Atoi(w.Header().Get("Retry-After"))
	// The failures past the burst take one second each, less the second
	// the burst's last one waits anyway and the time the test took.
	if want := checked - 2 - 2; w.Code != 429 || wait < want {
		t.Errorf("after %d failures at once (burst 2, 1 a second): %d, Retry-After %d s, want 429 and at least %d s",
			checked, w.Code, wait, want)
	}
}

// An IPv6 client is limited by its /64, which one host or one link gets
// whole: rotating through its addresses earns no fresh burst. Another /64
// is another client; an IPv4 client is its full address, however it is
// written.
func TestAuthFailuresLimitedPerIPv6Prefix(t *testing.T) {
	srv, err := server.New(server.Config{Keys: tokenTable{}, FailRate: 0.001, FailBurst: 2,
		Logger: slog.New(slog.DiscardHandler),
		Open:   func(context.Context, string) (memtool.Store, error) { return memstore.New(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	try := func(addr string) int {
		req := httptest.NewRequest("POST", "/v1/memory", strings.NewReader(view))
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer mt_0123456789abcdef_"+strings.Repeat("ab", 32))
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w.Code
	}
	for _, addr := range []string{"[2001:db8:0:1::1]:1000", "[2001:db8:0:1::2]:1000"} {
		if code := try(addr); code != 401 {
			t.Fatalf("%s, within the burst: %d, want 401", addr, code)
		}
	}
	for _, c := range []struct {
		addr string
		want int
	}{
		{"[2001:db8:0:1:ffff:ffff:ffff:ffff]:2000", 429}, // the same /64
		{"[2001:db8:0:1::3%eth0]:2000", 429},             // with a zone
		{"[2001:db8:0:2::1]:1000", 401},                  // the next /64
		{"192.0.2.1:1000", 401},
		{"192.0.2.1:1001", 401},
		{"[::ffff:192.0.2.1]:1002", 429}, // 192.0.2.1, mapped
		{"192.0.2.2:1000", 401},
	} {
		if code := try(c.addr); code != c.want {
			t.Errorf("%s: %d, want %d", c.addr, code, c.want)
		}
	}
}
