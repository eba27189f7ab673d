package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
)

// FuzzCheckMessage checks checkMessage against two oracles: what it
// accepts is one valid JSON value, and mustRefuse, which reads it with
// encoding/json, finds nothing in it to refuse (a key given twice, which
// the SDK would read as its last, or two keys that differ by case, at any
// depth; a version, an id or a batch the SDK would mishandle).
func FuzzCheckMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"prompts/get","params":{"name":"x","arguments":{"task":"a","Task":"b"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"} `,
		`[[[{"a":1,"a":2}]]]`,
		`{"a":{"b":[{"c":1,"C":2}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		refusal := checkMessage(data)
		if refusal != nil {
			if refusal.code != codeParseError && refusal.code != codeInvalidRequest {
				t.Fatalf("code %d", refusal.code)
			}
			if !json.Valid(refusal.response()) {
				t.Fatalf("invalid response %s", refusal.response())
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if why := mustRefuse(data); why != "" {
			t.Fatalf("accepted %q: %s", data, why)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			return
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			if seen[tok.(string)] {
				t.Fatalf("accepted %q, whose key %q is given twice", data, tok)
			}
			seen[tok.(string)] = true
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		if _, err := dec.Token(); err != io.EOF {
			t.Fatalf("accepted %q with data after it", data)
		}
	})
}

// TestCheckMessageIsLinear: checkMessage reads a deeply nested message,
// a long string at every level, with about the memory of a flat one of
// the same size, not copying the rest of the body at each level (which
// would take depth/2 copies of it, gigabytes here). Counted in bytes
// allocated, not timed: the time is BenchmarkCheckMessage's.
func TestCheckMessageIsLinear(t *testing.T) {
	flat, deep := nestedMessages(3000)
	allocated := func(data []byte) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if refusal := checkMessage(data); refusal != nil {
			t.Fatalf("refused: %s", refusal.msg)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	f, d := allocated(flat), allocated(deep)
	t.Logf("%d bytes: flat %d bytes allocated, deep %d", len(deep), f, d)
	if d > 4*f+uint64(len(deep)) {
		t.Errorf("checking a message %d bytes long, 3000 deep, allocated %d bytes; a flat one of the same size %d", len(deep), d, f)
	}
}

// nestedMessages returns two tools/list messages of one size, with depth
// strings of 1,000 bytes in params._meta: one in a flat array, one an
// array in an array at each.
func nestedMessages(depth int) (flat, deep []byte) {
	filler := `"` + strings.Repeat("x", 1000) + `",`
	wrap := func(value string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":` + value + `}}}`)
	}
	return wrap("[" + strings.Repeat(filler, depth) + "0" + "]"),
		wrap(strings.Repeat("["+filler, depth) + "0" + strings.Repeat("]", depth))
}

func BenchmarkCheckMessage(b *testing.B) {
	flat, deep := nestedMessages(3000)
	for _, c := range []struct {
		name string
		data []byte
	}{{"flat", flat}, {"deep", deep}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if refusal := checkMessage(c.data); refusal != nil {
					b.Fatal(refusal.msg)
				}
			}
		})
	}
}
