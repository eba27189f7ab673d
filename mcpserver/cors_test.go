package mcpserver_test

import (
	"testing"

	"github.com/memtool/memtool/mcpserver"
)

// TestNoCORS: AllowedOrigins keeps other origins out and lets nothing more
// in: no answer carries CORS headers, and a preflight is not granted, so a
// browser page of a listed origin on another host cannot make a call.
func TestNoCORS(t *testing.T) {
	url := serve(t, 1, staticTokens(map[string]access{"w": {seeded(t), true}}), &mcpserver.HTTPOptions{AllowedOrigins: []string{"https://app.example"}})[0]
	resp, body := post(t, url, callView, map[string]string{"Authorization": "Bearer w", "Origin": "https://app.example", "Mcp-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != 200 {
		t.Fatalf("a call from a listed origin: %d %s", resp.StatusCode, body)
	}
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("a call from a listed origin got Access-Control-Allow-Origin %q", v)
	}
	pre, _ := send(t, "OPTIONS", url, nil, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"})
	if pre.StatusCode/100 == 2 || pre.Header.Get("Access-Control-Allow-Origin") != "" || pre.Header.Get("Access-Control-Allow-Headers") != "" {
		t.Errorf("a preflight from a listed origin: %d %v; want it not granted", pre.StatusCode, pre.Header)
	}
}
