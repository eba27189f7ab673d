package server_test

import (
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// aliceKey lets every token write alice's memory.
type aliceKey struct{}

func (aliceKey) Verify(context.Context, string) (keys.Key, error) {
	return keys.Key{ID: "k", Tenant: "alice", Scope: keys.Write}, nil
}

// A request that stops waiting for its tenant's memory while another
// opens it, and the open that then fails, leave the server consistent
// (run with -race: the failure was written unlocked while the request
// that stopped waiting read it), and the next request opens it again.
func TestOpenFailsWhileAWaiterLeaves(t *testing.T) {
	opening, left := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opens := 0
	srv, err := server.New(server.Config{Keys: aliceKey{}, Rate: -1, Logger: slog.New(slog.DiscardHandler),
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			opens++
			if opens > 1 {
				return nil, errors.New("still down")
			}
			once.Do(func() { close(opening) })
			// Fail once the other request has left: told by no channel,
			// which would order its leaving before this failure.
			time.Sleep(100 * time.Millisecond)
			return nil, errors.New("down")
		}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(ctx context.Context) int { return postView(ctx, srv) }
	first := make(chan int)
	go func() { first <- post(context.Background()) }()
	<-opening
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	var leaving int
	go func() { leaving = post(gone); close(left) }()
	if code := <-first; code != http.StatusServiceUnavailable {
		t.Errorf("the request whose open failed: %d, want 503", code)
	}
	<-left
	if leaving != http.StatusServiceUnavailable {
		t.Errorf("a request that left: %d, want 503", leaving)
	}
	if code := post(context.Background()); code != http.StatusServiceUnavailable || opens != 2 {
		t.Errorf("the next request: %d after %d opens, want 503 after 2", code, opens)
	}
}

// A tenant's memory opened for one request serves the others waiting for
// it even if that request's client hangs up meanwhile: the open does not
// end with the request that started it.
func TestOpenOutlivesItsRequest(t *testing.T) {
	opening, ready := make(chan struct{}), make(chan struct{})
	var opens atomic.Int32
	srv, err := server.New(server.Config{Keys: aliceKey{}, Rate: -1, Logger: slog.New(slog.DiscardHandler),
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			if opens.Add(1) == 1 {
				close(opening)
			}
			select {
			case <-ready:
				return memstore.New(), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(ctx context.Context) int { return postView(ctx, srv) }
	hangUp, cancel := context.WithCancel(context.Background())
	go post(hangUp)
	<-opening
	waiter := make(chan int)
	go func() { waiter <- post(context.Background()) }()
	time.Sleep(50 * time.Millisecond) // the second request waits for the open
	cancel()
	time.Sleep(50 * time.Millisecond)
	close(ready)
	if code := <-waiter; code != http.StatusOK || opens.Load() != 1 {
		t.Errorf("a request waiting for the memory another opened: %d after %d opens, want 200 after 1", code, opens.Load())
	}
}

// postView sends alice's view to srv in process and returns the status.
func postView(ctx context.Context, srv http.Handler) int {
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1/memory", strings.NewReader(view))
	req.Header.Set("Authorization", "Bearer mt_x_y")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w.Code
}

// An Open that panics (net/http recovers the panic of the request that
// called it) does not leave the tenant's memory opening for ever: the
// next request opens it again instead of waiting for an open that will
// never end.
func TestOpenPanicDoesNotWedgeTheTenant(t *testing.T) {
	var opens atomic.Int32
	srv, err := server.New(server.Config{Keys: aliceKey{}, Rate: -1, Logger: slog.New(slog.DiscardHandler),
		Open: func(ctx context.Context, tenant string) (memtool.Store, error) {
			if opens.Add(1) == 1 {
				panic("a bug in a policy")
			}
			return memstore.New(), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the recovered panic
	ts.Start()
	defer ts.Close()
	client := &http.Client{Timeout: 30 * time.Second} // a guard against a hang only
	post := func() (int, error) {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/memory", strings.NewReader(view))
		req.Header.Set("Authorization", "Bearer mt_x_y")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if _, err := post(); err == nil {
		t.Fatal("the request whose Open panicked was answered")
	}
	if code, err := post(); code != http.StatusOK || err != nil {
		t.Errorf("the next request: %d %v after %d opens, want 200 after 2", code, err, opens.Load())
	}
}
