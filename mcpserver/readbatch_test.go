package mcpserver_test

import (
	"encoding/json"
	"testing"
)

// TestHTTPReadTokenBatch: a batch of views from an identity that may not
// write is answered as the same batch from a writer would be. (Checking
// whether it calls a tool that writes wrote the batch's first message
// over the body itself, so the SDK read garbage.)
func TestHTTPReadTokenBatch(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"r": {mem, false}}), nil)[0]
	body := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories/a.txt"}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}}}]`
	resp, answer := post(t, url, body, map[string]string{"Authorization": "Bearer r"})
	var answers []struct {
		ID     int
		Result struct{ IsError bool }
		Error  any
	}
	if err := json.Unmarshal([]byte(answer), &answers); resp.StatusCode != 200 || err != nil || len(answers) != 2 {
		t.Fatalf("%d %.300q", resp.StatusCode, answer)
	}
	for _, a := range answers {
		if a.Error != nil || a.Result.IsError {
			t.Errorf("%.300q", answer)
		}
	}
}
