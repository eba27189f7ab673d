package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/mcpserver"
)

// create is a tools/call of memory_create on /memories/NAME.
func create(name string) string {
	return `{"name":"memory_create","arguments":{"path":"/memories/` + name + `","file_text":"x"}}`
}

// badMessages are messages the server must refuse before anything runs,
// each with the JSON-RPC error code of the refusal and the file it would
// create if it ran. Each is ambiguous (a duplicate key, keys that differ
// only by case, an id the answer could not carry) or not one message.
var badMessages = []struct {
	name, body string
	code       int
	file       string
}{
	{"two methods", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":` + create("m.txt") + `}`, -32600, "m.txt"},
	{"two ids", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":` + create("i.txt") + `}`, -32600, "i.txt"},
	{"two params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}},"params":` + create("p.txt") + `}`, -32600, "p.txt"},
	{"two names", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_view","name":"memory_create","arguments":{"path":"/memories/n.txt","file_text":"x"}}}`, -32600, "n.txt"},
	{"method by case", `{"jsonrpc":"2.0","id":1,"Method":"tools/list","method":"tools/call","params":` + create("cm.txt") + `}`, -32600, "cm.txt"},
	{"name by case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_create","Name":"memory_view","arguments":{"path":"/memories/cn.txt","file_text":"x"}}}`, -32600, "cn.txt"},
	{"two metas", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1,"progressToken":2},"name":"memory_create","arguments":{"path":"/memories/mt.txt","file_text":"x"}}}`, -32600, "mt.txt"},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":` + create("f.txt") + `}`, -32600, "f.txt"},
	{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":` + create("big.txt") + `}`, -32600, "big.txt"},
	{"batch with one id twice", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("b1.txt") + `},{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("b2.txt") + `}]`, -32600, "b1.txt"},
	{"batch with a duplicate key", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("b3.txt") + `},{"jsonrpc":"2.0","id":2,"id":3,"method":"tools/list"}]`, -32600, "b3.txt"},
	{"data after the message", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("t.txt") + `} {"jsonrpc":"2.0"}`, -32700, "t.txt"},
}

// TestHTTPRefusesAmbiguousMessages: over HTTP each bad message is answered
// 400 with a JSON-RPC error, and nothing runs.
func TestHTTPRefusesAmbiguousMessages(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"w": {mem, true}}), nil)[0]
	for _, m := range badMessages {
		resp, body := post(t, url, m.body, map[string]string{"Authorization": "Bearer w"})
		var answer struct {
			ID    any
			Error struct{ Code int }
		}
		err := json.Unmarshal([]byte(body), &answer)
		if resp.StatusCode != 400 || err != nil || answer.Error.Code != m.code {
			t.Errorf("%s: %d %q, want 400 and JSON-RPC error %d", m.name, resp.StatusCode, body, m.code)
		}
		if strings.Contains(listing(t, mem), m.file) {
			t.Errorf("%s: ran (%s was created)", m.name, m.file)
		}
	}
	// The same messages without their flaw still run.
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("ok1.txt") + `}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"_meta":{"progressToken":1},"name":"memory_create","arguments":{"path":"/memories/ok2.txt","file_text":"x"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("ok3.txt") + `},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + create("ok4.txt") + `}]`,
	} {
		if resp, answer := post(t, url, body, map[string]string{"Authorization": "Bearer w"}); resp.StatusCode != 200 || strings.Contains(answer, "error") {
			t.Errorf("good message %d: %d %q", i, resp.StatusCode, answer)
		}
	}
	for _, f := range []string{"ok1.txt", "ok2.txt", "ok3.txt", "ok4.txt"} {
		if !strings.Contains(listing(t, mem), f) {
			t.Errorf("%s was not created", f)
		}
	}
}

// stdioServer serves mem over a byte stream, as memtool mcp does on its
// stdin and stdout, and returns the client's ends: the server's input and
// its output, line by line.
func stdioServer(t *testing.T, mem *memtool.Memory) (in io.WriteCloser, out *bufio.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := mcpserver.NewServer(mem, nil).Connect(context.Background(), mcpserver.NewIOTransport(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close(); ss.Close(); outR.Close() })
	return inW, bufio.NewReaderSize(outR, 1<<16)
}

// exchange writes line to in and reads the next line of out.
func exchange(t *testing.T, in io.Writer, out *bufio.Reader, line string) string {
	t.Helper()
	// Written as the server reads, as a client does: the answer may
	// come before the whole line is read.
	go io.WriteString(in, line+"\n")
	got := make(chan string, 1)
	go func() {
		l, _ := out.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer to %.200s", line)
		return ""
	}
}

const stdioInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestStdioRefusesAmbiguousMessages: over stdio each bad message is
// answered with a JSON-RPC error, nothing runs, and the session goes on.
func TestStdioRefusesAmbiguousMessages(t *testing.T) {
	mem := seeded(t)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for _, m := range badMessages {
		answer := exchange(t, in, out, m.body)
		var got struct {
			ID    any
			Error struct{ Code int }
		}
		if err := json.Unmarshal([]byte(answer), &got); err != nil || got.Error.Code != m.code {
			t.Errorf("%s: %q, want JSON-RPC error %d", m.name, answer, m.code)
		}
		if strings.Contains(listing(t, mem), m.file) {
			t.Errorf("%s: ran (%s was created)", m.name, m.file)
		}
	}
	if answer := exchange(t, in, out, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`+create("after.txt")+`}`); !strings.Contains(answer, `"id":7`) || !strings.Contains(listing(t, mem), "after.txt") {
		t.Errorf("after the refusals: %q", answer)
	}
}

// TestStdioOversized: a message over the limit is refused without being
// held whole, nothing runs, and the next message is answered.
func TestStdioOversized(t *testing.T) {
	mem := seeded(t)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	big := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/huge.txt","file_text":"` + strings.Repeat("x", 2*memtool.MaxInputBytes+1) + `"}}}`
	answer := exchange(t, in, out, big)
	if !strings.Contains(answer, `"code":-32600`) || !strings.Contains(answer, "larger than") {
		t.Errorf("oversized message: %.300q", answer)
	}
	if answer := exchange(t, in, out, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":`+create("next.txt")+`}`); !strings.Contains(answer, `"id":6`) {
		t.Errorf("the message after: %q", answer)
	}
	if l := listing(t, mem); strings.Contains(l, "huge.txt") || !strings.Contains(l, "next.txt") {
		t.Errorf("after an oversized message:\n%s", l)
	}
}

// TestStdioBatchAfter20250618: MCP 2025-06-18 removed batches; over stdio
// a batch in a session of that version is answered Invalid Request and
// runs nothing, and the session goes on, where the SDK ended it without
// an answer. A session of 2025-03-26 runs batches.
func TestStdioBatchAfter20250618(t *testing.T) {
	batch := func(a, b string) string {
		return `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create(a) + `},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + create(b) + `}]`
	}
	mem := seeded(t)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, strings.Replace(stdioInitialize, "2025-03-26", "2025-06-18", 1))
	if answer := exchange(t, in, out, batch("x1.txt", "x2.txt")); !strings.Contains(answer, `"code":-32600`) {
		t.Errorf("a batch in a 2025-06-18 session: %q", answer)
	}
	if answer := exchange(t, in, out, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":`+create("x3.txt")+`}`); !strings.Contains(answer, `"id":3`) {
		t.Errorf("after the batch: %q", answer)
	}
	if l := listing(t, mem); strings.Contains(l, "x1.txt") || strings.Contains(l, "x2.txt") || !strings.Contains(l, "x3.txt") {
		t.Errorf("after a refused batch:\n%s", l)
	}

	old := seeded(t)
	in, out = stdioServer(t, old)
	exchange(t, in, out, stdioInitialize)
	if answer := exchange(t, in, out, batch("y1.txt", "y2.txt")); !strings.HasPrefix(answer, "[") || strings.Contains(answer, "error") {
		t.Errorf("a batch in a 2025-03-26 session: %q", answer)
	}
	if l := listing(t, old); !strings.Contains(l, "y1.txt") || !strings.Contains(l, "y2.txt") {
		t.Errorf("after a batch of 2025-03-26:\n%s", l)
	}
}

// TestHTTPDeepMessageIsAnswered: a deeply nested message, a long string
// at every level, passes the check and is answered. That the check is
// linear in the message's size is TestCheckMessageIsLinear's (and
// BenchmarkCheckMessage's) to show.
func TestHTTPDeepMessageIsAnswered(t *testing.T) {
	mem := seeded(t)
	url := serve(t, 1, staticTokens(map[string]access{"w": {mem, true}}), nil)[0]
	const depth = 3000
	filler := `"` + strings.Repeat("x", 1000) + `",`
	value := strings.Repeat("["+filler, depth) + "0" + strings.Repeat("]", depth)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":` + value + `}}}`
	resp, answer := post(t, url, body, map[string]string{"Authorization": "Bearer w"})
	if resp.StatusCode != 200 || !strings.Contains(answer, `"memory_view"`) {
		t.Fatalf("%d %.200q", resp.StatusCode, answer)
	}
}
