package mcpserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// TestHTTPBatchCancelsItsCall: a batch (protocol 2025-03-26) of a call
// and a notifications/cancelled naming it is answered, with what the
// call did.
func TestHTTPBatchCancelsItsCall(t *testing.T) {
	store := &commitThenWait{Store: memstore.New(), committed: make(chan struct{})}
	mem := memtool.New(store, nil)
	url := serve(t, 1, staticTokens(map[string]access{"w": {mem, true}}), nil)[0]
	body := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("c.txt") + `},` +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}]`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer w")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	defer resp.Body.Close()
	b := make([]byte, 4096)
	n, _ := resp.Body.Read(b)
	t.Logf("after %v: %d %q", time.Since(start), resp.StatusCode, b[:n])
	created := strings.Contains(listing(t, mem), "c.txt")
	if resp.StatusCode != 200 || !strings.Contains(string(b[:n]), `"id":1`) || created != strings.Contains(string(b[:n]), "File created successfully") {
		t.Errorf("%d %q; c.txt created: %v", resp.StatusCode, b[:n], created)
	}
}
