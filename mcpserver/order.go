package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A callOrder keeps the tool calls of a stdio session in the order the
// client sent them. The MCP SDK runs every request of a session at once,
// each on its own goroutine, so that of a create and then a str_replace
// of the same file, sent one after the other without waiting, the
// str_replace could run first and fail, or of a delete and then a create,
// the delete could run last and take the new file with it. So a tools/call
// (or a batch holding one) is handed to the SDK only once every tool call
// handed to it before has been answered; the messages that are not tool
// calls (a notifications/cancelled, a ping, a resources/read) go on
// meanwhile. A notifications/cancelled of a call still held back drops
// it: it never runs, and, as for any cancelled request, is not answered.
type callOrder struct {
	read func() ([]byte, error) // the next checked message

	start sync.Once
	msgs  chan readResult
	done  chan struct{} // closed by close: the reader stops
	stop  sync.Once
	wake  chan struct{} // a call was answered

	mu          sync.Mutex
	outstanding map[string]bool // canonical ids of calls handed on, not yet answered

	// Used by next alone (the SDK reads from one goroutine).
	held []heldMessage // tool calls not yet handed on, in order
	err  error         // the input's end, given once held is empty
}

type readResult struct {
	msg []byte
	err error
}

// A heldMessage is a message holding tool calls, with their ids.
type heldMessage struct {
	msg []byte
	ids []string
}

func newCallOrder(read func() ([]byte, error)) *callOrder {
	return &callOrder{read: read, msgs: make(chan readResult), done: make(chan struct{}), wake: make(chan struct{}, 1), outstanding: map[string]bool{}}
}

// pump reads the input ahead, so that messages behind a held call reach
// the SDK.
func (o *callOrder) pump() {
	for {
		msg, err := o.read()
		select {
		case o.msgs <- readResult{msg, err}:
		case <-o.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (o *callOrder) close() { o.stop.Do(func() { close(o.done) }) }

// next is the next message to hand the SDK.
func (o *callOrder) next() ([]byte, error) {
	o.start.Do(func() { go o.pump() })
	for {
		if len(o.held) > 0 && o.idle() {
			h := o.held[0]
			o.held = o.held[1:]
			o.handOn(h.ids)
			return h.msg, nil
		}
		if len(o.held) == 0 && o.err != nil {
			return nil, o.err
		}
		msgs := o.msgs
		if o.err != nil {
			msgs = nil // the input has ended: only answers are awaited
		}
		select {
		case r := <-msgs:
			if r.err != nil {
				o.err = r.err
				continue
			}
			ids, cancelled := toolCalls(r.msg)
			if cancelled != "" {
				o.drop(cancelled)
			}
			if len(ids) == 0 {
				return r.msg, nil
			}
			if len(o.held) == 0 && o.idle() {
				o.handOn(ids)
				return r.msg, nil
			}
			o.held = append(o.held, heldMessage{r.msg, ids})
		case <-o.wake:
		case <-o.done:
			return nil, io.EOF
		}
	}
}

// drop forgets the held call of id (a single call, not one in a batch).
func (o *callOrder) drop(id string) {
	for i, h := range o.held {
		if len(h.ids) == 1 && h.ids[0] == id && h.msg[0] == '{' {
			o.held = append(o.held[:i:i], o.held[i+1:]...)
			return
		}
	}
}

func (o *callOrder) idle() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.outstanding) == 0
}

func (o *callOrder) handOn(ids []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		o.outstanding[id] = true
	}
}

// answered notes the answers in line, a message (or batch) written to the
// client.
func (o *callOrder) answered(line []byte) {
	var msgs []json.RawMessage
	if b := bytes.TrimSpace(line); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &msgs) != nil {
			return
		}
	} else {
		msgs = []json.RawMessage{b}
	}
	o.mu.Lock()
	n := len(o.outstanding)
	for _, m := range msgs {
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &resp) != nil || resp.Method != "" || len(resp.ID) == 0 {
			continue // a request or notification of the server's own
		}
		if id := canonicalID(resp.ID); id != nil {
			delete(o.outstanding, string(id))
		}
	}
	woke := len(o.outstanding) < n
	o.mu.Unlock()
	if woke {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// toolCalls are the canonical ids of the tools/call requests of msg, a
// checked message or batch; cancelled is the request a
// notifications/cancelled in it names, if any. Each message is read as
// the SDK reads it, with names in their case: {"METHOD":"tools/call",
// "id":1} is no call to the SDK, which never answers it, so counting it
// would hold every later call of the session back for good.
func toolCalls(msg []byte) (ids []string, cancelled string) {
	msgs := []json.RawMessage{msg}
	if msg[0] == '[' {
		// Into a new slice: json.Unmarshal would write the first member
		// over msg itself, msgs[0].
		msgs = nil
		if json.Unmarshal(msg, &msgs) != nil {
			return nil, ""
		}
	}
	for _, m := range msgs {
		decoded, err := jsonrpc.DecodeMessage(m)
		req, ok := decoded.(*jsonrpc.Request)
		if err != nil || !ok {
			continue
		}
		switch {
		case req.Method == "tools/call" && req.IsCall():
			if id, err := json.Marshal(req.ID.Raw()); err == nil {
				ids = append(ids, string(id))
			}
		case req.Method == "notifications/cancelled" && !req.IsCall() && msg[0] == '{':
			// A map keeps each key in its case (checkMessage refused a
			// key given twice or in two cases).
			var params map[string]json.RawMessage
			if json.Unmarshal(req.Params, &params) != nil || len(params["requestId"]) == 0 {
				continue
			}
			if id := canonicalID(params["requestId"]); id != nil {
				cancelled = string(id)
			}
		}
	}
	return ids, cancelled
}
