package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool/keys"
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
