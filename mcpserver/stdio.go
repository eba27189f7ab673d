package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewIOTransport is the stdio transport of a server (memtool mcp runs it
// on its stdin and stdout): newline-delimited JSON-RPC read from r and
// written to w, as mcp.IOTransport, with each message checked before the
// SDK reads it, as NewHTTPHandler checks a request's body. A message the
// check refuses (a key given twice, keys that differ only by case, an id
// the answer could not carry, a batch giving one id to two requests, data
// after the message on its line) or one larger than 16 MiB (twice
// memtool.MaxInputBytes, which is never read whole) is answered with a
// JSON-RPC error, Invalid Request or Parse error, and dropped up to the
// end of its line: nothing in it runs, and the session goes on. So is a
// batch in a session of protocol version 2025-06-18 or later, which has
// none (the SDK would end the session). Input that is not JSON at all
// ends the session, as it does on mcp.IOTransport.
func NewIOTransport(r io.ReadCloser, w io.WriteCloser) *mcp.IOTransport {
	out := &lineWriter{w: w}
	return &mcp.IOTransport{Reader: newMessageReader(r, out), Writer: out}
}

// lineWriter serialises the writes of the SDK (one whole message each)
// and of messageReader's refusals, so that no two lines interleave.
type lineWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
	// answered, if set, is told of each message written, once written:
	// the answers callOrder waits for.
	answered func(line []byte)
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if l.answered != nil {
		l.answered(p)
	}
	return n, err
}

func (l *lineWriter) Close() error { return l.w.Close() }

// messageReader hands the SDK the checked messages of src, one a line.
type messageReader struct {
	src     io.ReadCloser
	in      *bufio.Reader
	input   *boundedInput // what dec reads: carried bytes, then in
	dec     *json.Decoder
	out     *lineWriter
	pending []byte // a checked message and its newline, not yet read
	// noBatches: the session's protocol version has no batches (MCP
	// 2025-06-18 and later), where the SDK would end the session at one.
	noBatches bool
	order     *callOrder // holds tool calls back in the order they came (see order.go)
	split     [][]byte   // the rest of a batch taken apart (see splitBatch)
}

func newMessageReader(src io.ReadCloser, out *lineWriter) *messageReader {
	m := &messageReader{src: src, in: bufio.NewReader(src), out: out}
	m.order = newCallOrder(m.next)
	out.answered = m.order.answered
	m.restart(nil)
	return m
}

// restart begins decoding afresh with carry, then the rest of src.
func (m *messageReader) restart(carry []byte) {
	m.input = &boundedInput{carry: carry, in: m.in}
	m.dec = json.NewDecoder(m.input)
	m.input.dec = m.dec
}

func (m *messageReader) Close() error {
	m.order.close()
	return m.src.Close()
}

// Read gives the SDK the next message, in the order callOrder lets it.
func (m *messageReader) Read(p []byte) (int, error) {
	if len(m.pending) == 0 {
		msg, err := m.order.next()
		if err != nil {
			return 0, err
		}
		m.pending = append(msg, '\n')
	}
	n := copy(p, m.pending)
	m.pending = m.pending[n:]
	return n, nil
}

// next is the next checked message of src: a message the check refuses
// is answered here and passed over.
func (m *messageReader) next() ([]byte, error) {
	if len(m.split) > 0 {
		msg := m.split[0]
		m.split = m.split[1:]
		return msg, nil
	}
	for {
		var raw json.RawMessage
		err := m.dec.Decode(&raw)
		var refusal *messageError
		switch {
		case errors.Is(err, errMessageTooLarge):
			refusal = &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the message is larger than %d bytes", maxBodyBytes)}
		case err != nil:
			return nil, err // io.EOF, a broken input, or input that is not JSON
		case !m.lineEnds():
			refusal = &messageError{code: codeParseError, msg: "Parse error: data after the JSON-RPC message on its line"}
		case m.noBatches && raw[0] == '[':
			refusal = &messageError{code: codeInvalidRequest, msg: "Invalid Request: batches are not part of the protocol version of this session (2025-06-18 and later)"}
		default:
			refusal = checkMessage(raw)
		}
		if refusal == nil {
			m.noticeInitialize(raw)
			if raw[0] == '[' {
				msgs := splitBatch(raw)
				m.split = msgs[1:]
				return msgs[0], nil
			}
			return raw, nil
		}
		if _, err := m.out.Write(append(refusal.response(), '\n')); err != nil {
			return nil, err
		}
		if raw == nil || !m.lineEnds() {
			if err := m.skipLine(); err != nil {
				return nil, err
			}
		}
	}
}

// splitBatch takes the notifications out of a batch, checked: each is a
// message of its own, before the batch of the rest, if any. The SDK takes
// every notification of a batch for a request awaiting its answer, all
// under one empty id: a batch with two notifications ended the session,
// and one with a notification and a tools/call was never answered (the
// call ran all the same, and the calls after it waited for its answer).
// A batch's members may run in any order, and notifications get no
// answer, so nothing else changes; and a notifications/cancelled of a
// held call, alone now, drops it (see callOrder).
func splitBatch(raw json.RawMessage) [][]byte {
	var members []json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return [][]byte{raw}
	}
	var alone [][]byte
	var rest []json.RawMessage
	for _, member := range members {
		// Read as the SDK reads it (names in their case).
		if msg, err := jsonrpc.DecodeMessage(member); err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() {
				alone = append(alone, member)
				continue
			}
		}
		rest = append(rest, member)
	}
	if len(alone) == 0 {
		return [][]byte{raw}
	}
	if len(rest) > 0 {
		batch, _ := json.Marshal(rest) // RawMessages already checked: never fails
		alone = append(alone, batch)
	}
	return alone
}

// noticeInitialize reads the protocol version an initialize request asks
// for: the session's, as the SDK negotiates it (the version asked for if
// it knows it, else its latest), so whether batches are allowed.
func (m *messageReader) noticeInitialize(raw json.RawMessage) {
	if raw[0] != '{' || !bytes.Contains(raw, []byte(`"initialize"`)) {
		return
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &req) != nil || req.Method != "initialize" {
		return
	}
	switch req.Params.ProtocolVersion {
	case "", "2024-11-05", "2025-03-26":
		m.noBatches = false
	default:
		m.noBatches = true
	}
}

// lineEnds reports whether nothing but blanks follows the message just
// decoded before the end of its line, as far as the decoder has read.
func (m *messageReader) lineEnds() bool {
	rest, _ := io.ReadAll(m.dec.Buffered()) // a view of the decoder's buffer: it consumes nothing
	rest = bytes.TrimLeft(rest, " \t\r")
	return len(rest) == 0 || rest[0] == '\n'
}

// skipLine drops the input up to the end of the current line, and
// decodes afresh after it.
func (m *messageReader) skipLine() error {
	// Not yet decoded: what the decoder has buffered, then what it has
	// not taken yet, then the rest of src.
	rest, _ := io.ReadAll(m.dec.Buffered())
	rest = append(rest, m.input.carry...)
	// Blank lines before the dropped message are not its end.
	rest = bytes.TrimLeft(rest, " \t\r\n")
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		m.restart(rest[i+1:])
		return nil
	}
	for {
		_, err := m.in.ReadSlice('\n')
		switch {
		case err == nil:
			m.restart(nil)
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
}

// errMessageTooLarge: the decoder buffered more than maxBodyBytes of one
// message.
var errMessageTooLarge = errors.New("mcpserver: message too large")

// boundedInput is the decoder's input: it refuses to give the decoder
// more once the message being decoded holds more than maxBodyBytes, so
// that an endless line is never held whole.
type boundedInput struct {
	carry []byte
	in    io.Reader
	dec   *json.Decoder
	n     int64 // bytes given to dec
}

func (b *boundedInput) Read(p []byte) (int, error) {
	// dec's offset stays at the start of the value it is decoding until
	// the value is whole: it is given at most maxBodyBytes of one value.
	allowed := maxBodyBytes - (b.n - b.dec.InputOffset())
	if allowed <= 0 {
		return 0, errMessageTooLarge
	}
	if int64(len(p)) > allowed {
		p = p[:allowed]
	}
	var n int
	var err error
	if len(b.carry) > 0 {
		n = copy(p, b.carry)
		b.carry = b.carry[n:]
	} else {
		n, err = b.in.Read(p)
	}
	b.n += int64(n)
	return n, err
}
