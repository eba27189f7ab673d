package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/server"
)

// BenchmarkMemoryEndpoint is the server's own cost per request: a view of
// a small file in a memstore, over loopback HTTP, from parallel clients.
func BenchmarkMemoryEndpoint(b *testing.B) {
	t := &testing.T{}
	f := newFixture(t, nil)
	_, tok := f.key(t, "alice", keys.Write)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var n atomic.Int64
	post := func(body string) {
		req, _ := http.NewRequest("POST", f.url+"/v1/memory", bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	post(fmt.Sprintf(create, "alice"))
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			post(view)
			n.Add(1)
		}
	})
}

// BenchmarkOverhead pairs the server's handling of POST /v1/memory (in
// process: ServeHTTP with a recorder, no network) with the engine alone
// (turn.Runner.Line, what memtool exec runs for a line) on the same
// command, so that server/engine is what the server adds per command.
// The access log is written (as JSON, to io.Discard) as memtool serve
// writes it.
func BenchmarkOverhead(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"view", view},
		{"str_replace", `{"command":"str_replace","path":"/memories/notes.md","old_str":"SECRET","new_str":"SECRET"}`},
	} {
		t := &testing.T{}
		f := newFixture(t, func(cfg *server.Config) {
			cfg.AccessLog = slog.New(slog.NewJSONHandler(io.Discard, nil))
		})
		_, tok := f.key(t, "alice", keys.Write)
		f.do(t, "POST", "/v1/memory", tok, fmt.Sprintf(create, "alice"))
		mem := memtool.New(f.stores["alice"], nil)
		runner := turn.Runner{Mem: mem, Timeout: time.Minute, Workers: 4}
		b.Run(c.name+"/engine", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runner.Line(context.Background(), []byte(c.line))
			}
		})
		b.Run(c.name+"/server", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/v1/memory", strings.NewReader(c.line))
				req.Header.Set("Authorization", "Bearer "+tok)
				rec := httptest.NewRecorder()
				f.server.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
}
