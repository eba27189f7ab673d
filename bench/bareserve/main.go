// Command bareserve is the floor under memtool serve's cost per request:
// a bare Go HTTP server that answers POST /v1/memory with what memtool
// exec writes for the body, through the same engine (memtool.Memory and
// the turn runner exec uses), with memtool serve's floor under the heap,
// and nothing else: no keys, no tenants, no rate limits, no metrics, no
// access log, no timeouts, no body limit.
// Never serve anything with it.
//
// It stands in for the memtool binary in bench/serve, which calls it as it
// calls memtool (docs/serve.md, "the floor under a request"):
//
//	go build -o /tmp/bareserve ./bench/bareserve
//	serve -memtool /tmp/bareserve -store mem: -workload mixed.jsonl
//
// `bareserve keys add …` prints a token that nothing checks; `bareserve
// serve --store URL --listen ADDR` serves the store's memory (one, without
// tenants) and writes the line memtool serve writes once it listens.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/gcfloor"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/storeurl"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "keys" && os.Args[2] == "add" {
		fmt.Println("bare-token")
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "bareserve: keys add … | serve --store URL --listen ADDR")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	store := fs.String("store", "mem:", "the store URL")
	listen := fs.String("listen", "127.0.0.1:0", "the address to listen on")
	fs.String("rate", "", "ignored (memtool serve's)")
	fs.String("keys", "", "ignored (memtool serve's)")
	fs.Parse(os.Args[2:])
	if err := serve(*store, *listen); err != nil {
		fmt.Fprintf(os.Stderr, "bareserve: %v\n", err)
		os.Exit(1)
	}
}

func serve(url, addr string) error {
	gcfloor.Start(gcfloor.DefaultFloor) // as memtool serve does
	ctx := context.Background()
	s, closer, err := storeurl.Open(ctx, url, &storeurl.Options{Create: true})
	if err != nil {
		return err
	}
	defer closer.Close()
	runner := turn.Runner{Mem: memtool.New(s, nil), Timeout: time.Minute, Workers: 4 * runtime.GOMAXPROCS(0)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/memory", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || len(body) == 0 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(runner.Line(r.Context(), body))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]string{"msg": "serving", "url": "http://" + ln.Addr().String()})
	fmt.Fprintf(os.Stderr, "%s\n", line)
	return http.Serve(ln, mux)
}
