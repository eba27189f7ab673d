package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// FuzzCheckMessage checks checkMessage against two oracles: what it
// accepts is one valid JSON value, and a top-level key given twice (which
// the SDK would read as its last) is never accepted.
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
