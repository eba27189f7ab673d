package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
	"github.com/memtool/memtool/server/resource"
)

// A client that sent its headers and part of its body and then went
// silent (a laptop shut, a network gone) does not hold up a shutdown:
// its request is cut off when the requests' contexts end, and Serve
// returns nil, as for a shutdown in which every request finished, well
// before the read timeout. Before, the body read waited for the read
// timeout (a minute by default, longer than the shutdown's 30 s), and
// memtool serve exited with "requests still running" on every SIGTERM
// while such a client was connected. Both a tool call and a resource
// API write are stalled; neither changes anything.
func TestShutdownCutsOffStalledBodies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, tok := f.key(t, "alice", keys.Write)
	store := memstore.New()
	var srv *server.Server
	res := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
		mem, canWrite, err := srv.Memory(r)
		if err != nil {
			return nil, false, err
		}
		return mem.Store(), canWrite, nil
	}, nil)
	mount := res.Mount()
	srv, err := server.New(server.Config{Keys: f.ring, Mount: mount, ShutdownTimeout: 12 * time.Second,
		ReadTimeout: time.Hour, WriteTimeout: time.Hour, // only the shutdown may end them
		Logger: slog.New(slog.DiscardHandler),
		Open:   func(context.Context, string) (memtool.Store, error) { return store, nil }})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := listen(t, srv, "", "")
	tool := `{"command":"create","path":"/memories/tool.md","file_text":"x"}`
	stalled := []string{
		fmt.Sprintf("POST /v1/memory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", tok, len(tool), tool[:10]),
		fmt.Sprintf("PUT /v1/file?path=/memories/put.md HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 100\r\n\r\nabc", tok),
	}
	var conns []net.Conn
	for _, req := range stalled {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Both are in their handlers (the scrape is the third request).
	for inFlight(t, addr) != 3 {
		time.Sleep(time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v, want nil: the stalled requests are cut off", err)
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard against a hang only
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode < 400 {
			t.Errorf("stalled request %d answered %d", i, resp.StatusCode)
		}
	}
	for _, name := range []string{"tool.md", "put.md"} {
		if _, err := store.Stat(context.Background(), name); err == nil {
			t.Errorf("%s was written from a body that never came whole", name)
		}
	}
}

// inFlight scrapes memtool_http_requests_in_flight from the server at addr.
func inFlight(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		var n int
		if _, err := fmt.Sscanf(line, "memtool_http_requests_in_flight %d", &n); err == nil {
			return n
		}
	}
	t.Fatal("no memtool_http_requests_in_flight in /metrics")
	return 0
}

// A client that stops reading a long answer part way (and keeps its
// connection open) does not hold up a shutdown either: once the
// request's context ends, its answer has a bounded time left to be
// written, within the shutdown's. Before, the write waited for the write
// timeout (CallTimeout + 1 min by default).
func TestShutdownCutsOffStalledReaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, tok := f.key(t, "alice", keys.Write)
	store := memstore.New()
	big := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB: more than the sockets' buffers hold
	if err := store.WriteFile(context.Background(), "big.md", []byte(big), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	var srv *server.Server
	res := resource.New(func(r *http.Request) (memtool.Store, bool, error) {
		mem, canWrite, err := srv.Memory(r)
		if err != nil {
			return nil, false, err
		}
		return mem.Store(), canWrite, nil
	}, &resource.Options{MaxFileBytes: int64(len(big))})
	srv, err := server.New(server.Config{Keys: f.ring, Mount: map[string]http.Handler{"GET /v1/file": res},
		ShutdownTimeout: 12 * time.Second, ReadTimeout: time.Hour, WriteTimeout: time.Hour,
		Logger: slog.New(slog.DiscardHandler),
		Open:   func(context.Context, string) (memtool.Store, error) { return store, nil }})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := listen(t, srv, "", "")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /v1/file?path=/memories/big.md HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", tok)
	if _, err := c.Read(make([]byte, 1)); err != nil { // the answer has begun, and is not read further
		t.Fatal(err)
	}
	if n := inFlight(t, addr); n != 2 {
		t.Fatalf("%d requests in flight, want the stalled one and the scrape", n)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v, want nil: the stalled answer is cut off", err)
	}
}
