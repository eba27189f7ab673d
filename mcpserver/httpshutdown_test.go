package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/mcpserver"
	"github.com/memtool/memtool/memstore"
)

// TestHTTPCallCutOff: when the request's context ends while its call runs
// (memtool serve ends it shortly before a shutdown gives up), the call is
// cancelled and still answered, with what it did.
func TestHTTPCallCutOff(t *testing.T) {
	store := &commitThenWait{Store: memstore.New(), committed: make(chan struct{})}
	mem := memtool.New(store, nil)
	h := mcpserver.NewHTTPHandler(staticTokens(map[string]access{"w": {mem, true}}), nil)
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":` + create("c.txt") + `}`
	ctx, cutOff := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, "POST", "http://localhost/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer w")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-store.committed:
	case <-time.After(10 * time.Second):
		t.Fatal("the create did not reach the store")
	}
	start := time.Now()
	cutOff()
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler did not return after its request's context ended")
	}
	t.Logf("returned after %v: %d %q", time.Since(start), rec.Code, rec.Body.String())
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"id":5`) || !strings.Contains(rec.Body.String(), "created") {
		t.Errorf("a call cut off after its change: %d %q", rec.Code, rec.Body.String())
	}
}
