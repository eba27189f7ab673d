package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// JSON-RPC's error codes of a message refused before it runs.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// A messageError refuses a transport message before the SDK reads it: it
// is answered with a JSON-RPC error response, and nothing in it runs.
type messageError struct {
	code int
	id   json.RawMessage // the request's id if it has one beyond doubt, else nil (null)
	msg  string
}

func (e *messageError) Error() string { return e.msg }

// response is the JSON-RPC error response to the refused message, one line.
func (e *messageError) response() []byte {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{e.code, e.msg}})
	return b
}

// maxExactID bounds a numeric id: the SDK holds ids as float64, so a
// larger one would be answered with another number.
const maxExactID = 1 << 53

// checkMessage checks one transport message, a JSON-RPC message or a
// batch of them, before the SDK reads it, and refuses one the SDK would
// read differently from another reader or answer with an id that is not
// the request's:
//
//   - an object (at any depth) with a key twice, or two keys that differ
//     only by case: the SDK runs the last "method", "id" or "params" and
//     ignores a key in another case, where a proxy or an audit log in
//     front of it may read the first, or fold case. The arguments of a
//     tools/call are left to the tool's own strict parser, which refuses
//     the same and tells the model so;
//   - an id that is neither a string nor an integer of at most 2^53 in
//     size (1.5 would be answered as 1);
//   - a batch that is empty, holds anything but objects, or gives one id
//     to two requests (only one of them would be answered);
//   - anything but one JSON value (a parse error).
func checkMessage(data []byte) *messageError {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return &messageError{code: codeParseError, msg: "Parse error: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &messageError{code: codeParseError, msg: "Parse error: data after the JSON-RPC message"}
	}
	switch raw[0] {
	case '{':
		_, err := checkEnvelope(raw)
		return err
	case '[':
		return checkBatch(raw)
	}
	return &messageError{code: codeInvalidRequest, msg: "Invalid Request: a message must be a JSON object (or a batch, an array of them)"}
}

// checkBatch checks each message of a batch, and that no id is given to
// two of them.
func checkBatch(raw json.RawMessage) *messageError {
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return &messageError{code: codeParseError, msg: "Parse error: " + err.Error()}
	}
	if len(msgs) == 0 {
		return &messageError{code: codeInvalidRequest, msg: "Invalid Request: an empty batch"}
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		if len(m) == 0 || m[0] != '{' {
			return &messageError{code: codeInvalidRequest, msg: "Invalid Request: a batch may hold only JSON-RPC messages (objects)"}
		}
		id, err := checkEnvelope(m)
		if err != nil {
			err.id = nil // the batch is refused whole: no one request is answered
			return err
		}
		if id == nil {
			continue
		}
		if ids[string(id)] {
			return &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the id %s is given to two messages of the batch", id)}
		}
		ids[string(id)] = true
	}
	return nil
}

// checkEnvelope checks one JSON-RPC message, an object, and returns its
// id in a canonical form (an integer as digits, a string quoted), or nil
// if it has none.
func checkEnvelope(raw json.RawMessage) (json.RawMessage, *messageError) {
	members, err := objectMembers(raw)
	if err != nil {
		return nil, err
	}
	var id json.RawMessage
	if v, ok := members["id"]; ok && string(v) != "null" {
		if id = canonicalID(v); id == nil {
			return nil, &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the id %.40s is not a string or an integer of at most 2^53", v)}
		}
	}
	var method string
	_ = json.Unmarshal(members["method"], &method) // a bad method is the SDK's to refuse
	for key, v := range members {
		if key == "params" && method == "tools/call" {
			err = checkCallParams(v)
		} else {
			err = checkKeys(v)
		}
		if err != nil {
			err.id = id
			return nil, err
		}
	}
	return id, nil
}

// checkCallParams checks the params of a tools/call, all but the
// arguments, which the tool's parser checks.
func checkCallParams(raw json.RawMessage) *messageError {
	if len(raw) == 0 || raw[0] != '{' {
		return nil // not an object: the SDK refuses it
	}
	members, err := objectMembers(raw)
	if err != nil {
		return err
	}
	for key, v := range members {
		if key == "arguments" {
			continue
		}
		if err := checkKeys(v); err != nil {
			return err
		}
	}
	return nil
}

// objectMembers returns the members of the JSON object raw, refusing a
// key given twice or two keys that differ only by case.
func objectMembers(raw json.RawMessage) (map[string]json.RawMessage, *messageError) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // '{': raw is an object
	members := map[string]json.RawMessage{}
	folded := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &messageError{code: codeParseError, msg: "Parse error: " + err.Error()}
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, &messageError{code: codeParseError, msg: "Parse error: " + err.Error()}
		}
		if other, ok := folded[foldKey(key)]; ok {
			if other == key {
				return nil, &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the key %q is given twice in one object", key)}
			}
			return nil, &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the keys %q and %q of one object differ only by case", other, key)}
		}
		folded[foldKey(key)] = key
		members[key] = v
	}
	return members, nil
}

// checkKeys checks every object in the JSON value raw, at any depth.
func checkKeys(raw json.RawMessage) *messageError {
	switch {
	case len(raw) == 0:
		return nil
	case raw[0] == '{':
		members, err := objectMembers(raw)
		if err != nil {
			return err
		}
		for _, v := range members {
			if err := checkKeys(v); err != nil {
				return err
			}
		}
	case raw[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return &messageError{code: codeParseError, msg: "Parse error: " + err.Error()}
		}
		for _, v := range items {
			if err := checkKeys(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// canonicalID is a request id as the answer will carry it, or nil if the
// SDK cannot carry it unchanged: a string as it is, or an integer (in
// JSON's integer form, no fraction or exponent) of at most 2^53 in size.
func canonicalID(v json.RawMessage) json.RawMessage {
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil
		}
		b, _ := json.Marshal(s)
		return b
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return nil
	}
	return json.RawMessage(strconv.FormatInt(n, 10))
}

// foldKey maps s to one representative of the strings equal to it under
// Unicode simple case folding, as memtool's tool input parser compares
// keys.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}
