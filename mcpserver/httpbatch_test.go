package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPBatchWithNotifications: over HTTP (protocol 2025-03-26, which
// has batches), a batch of a notification and a tools/call is answered
// with the call's answer, and a batch of two notifications is accepted,
// as over stdio.
func TestHTTPBatchWithNotifications(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"w": {mem, true}}), nil)[0]
	header := map[string]string{"Authorization": "Bearer w", "Mcp-Protocol-Version": "2025-03-26"}
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, body := post(t, url, "["+note+","+callView+"]", header)
		if resp.StatusCode != 200 || !strings.Contains(body, `"id":1`) || !strings.Contains(body, `one\n`) {
			t.Errorf("[notification, call]: %d %q", resp.StatusCode, body)
		}
		resp, body = post(t, url, "["+note+","+cancel+"]", header)
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("[notification, notification]: %d %q, want 202", resp.StatusCode, body)
		}
		resp, body = post(t, url, "["+callView+","+cancel+"]", header)
		if resp.StatusCode != 200 || !strings.Contains(body, `"id":1`) || !strings.Contains(body, `one\n`) {
			t.Errorf("[call, notification]: %d %q", resp.StatusCode, body)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a batch holding notifications was never answered")
	}
}
