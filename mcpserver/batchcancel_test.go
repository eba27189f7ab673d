package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// TestStdioHeldCallCancelledInBatch: a call held behind a running one is
// dropped also when the notifications/cancelled naming it comes in a
// batch (protocol 2025-03-26 has batches): it never runs later.
func TestStdioHeldCallCancelledInBatch(t *testing.T) {
	store := &commitThenWait{Store: memstore.New(), committed: make(chan struct{})}
	mem := memtool.New(store, nil)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	go in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("c.txt") + "}\n"))
	select {
	case <-store.committed:
	case <-time.After(10 * time.Second):
		t.Fatal("the create did not reach the store")
	}
	first := exchange(t, in, out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+create("d.txt")+"}\n"+
		`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}},`+
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}]`)
	if !strings.Contains(first, `"id":1`) {
		t.Errorf("the first answer: %q", first)
	}
	next := exchange(t, in, out, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}}}`)
	if !strings.Contains(next, `"id":3`) || strings.Contains(next, "d.txt") || !strings.Contains(next, "c.txt") {
		t.Errorf("after the held call was cancelled in a batch: %q", next)
	}
}

// TestStdioBatchWithNotifications: a batch holding notifications beside
// a tools/call (protocol 2025-03-26) is answered, and the session goes
// on: the SDK alone would take each notification for a request awaiting
// an answer, never answer the batch (the call ran all the same), and end
// the session at a batch of two notifications.
func TestStdioBatchWithNotifications(t *testing.T) {
	mem := memtool.New(memstore.New(), nil)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	in.Write([]byte(`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]` + "\n"))
	answer := exchange(t, in, out, `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":98}},{"jsonrpc":"2.0","id":12,"method":"tools/call","params":`+create("a.txt")+`}]`)
	if !strings.HasPrefix(answer, "[") || !strings.Contains(answer, `"id":12`) || !strings.Contains(answer, "File created successfully") {
		t.Errorf("the answer to a batch of a notification and a call: %q", answer)
	}
	next := exchange(t, in, out, `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}}}`)
	if !strings.Contains(next, `"id":13`) || !strings.Contains(next, "a.txt") {
		t.Errorf("the call after the batch: %q", next)
	}
}
