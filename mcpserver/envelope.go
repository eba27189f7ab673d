package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/memtool/memtool"
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
//   - a message whose "jsonrpc" is not "2.0" (the SDK's reader fails
//     on it, ending a stdio session);
//   - an id that is neither a string nor an integer of at most 2^53 in
//     size (1.5 would be answered as 1);
//   - a batch that is empty, holds anything but objects, or gives one id
//     to two requests (only one of them would be answered);
//   - anything but one JSON value (a parse error).
//
// It reads the message once, token by token, so that its cost is linear
// in the message's size however deep it nests.
func checkMessage(data []byte) *messageError {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return parseError(err)
	}
	var refusal *messageError
	switch tok {
	case json.Delim('{'):
		var m message
		if refusal = m.readObject(dec); refusal == nil {
			refusal = m.check()
		}
	case json.Delim('['):
		refusal = checkBatch(dec)
	default:
		return &messageError{code: codeInvalidRequest, msg: "Invalid Request: a message must be a JSON object (or a batch, an array of them)"}
	}
	if refusal != nil {
		return refusal
	}
	if _, err := dec.Token(); err != io.EOF {
		return &messageError{code: codeParseError, msg: "Parse error: data after the JSON-RPC message"}
	}
	return nil
}

func parseError(err error) *messageError {
	return &messageError{code: codeParseError, msg: "Parse error: " + err.Error()}
}

// checkBatch checks the messages of a batch, its '[' read, and that no id
// is given to two of them. A refused batch is refused whole: no one
// request of it is answered.
func checkBatch(dec *json.Decoder) *messageError {
	ids := map[string]bool{}
	n := 0
	for ; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			return parseError(err)
		}
		if tok != json.Delim('{') {
			return &messageError{code: codeInvalidRequest, msg: "Invalid Request: a batch may hold only JSON-RPC messages (objects)"}
		}
		var m message
		refusal := m.readObject(dec)
		if refusal == nil {
			refusal = m.check()
		}
		if refusal != nil {
			refusal.id = nil
			return refusal
		}
		if m.id == nil {
			continue
		}
		if ids[string(m.id)] {
			return &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the id %s is given to two messages of the batch", m.id)}
		}
		ids[string(m.id)] = true
	}
	if _, err := dec.Token(); err != nil { // ']'
		return parseError(err)
	}
	if n == 0 {
		return &messageError{code: codeInvalidRequest, msg: "Invalid Request: an empty batch"}
	}
	return nil
}

// A message is what checkMessage keeps of one JSON-RPC message as it
// reads it.
type message struct {
	id        json.RawMessage // canonical (see canonicalID), nil if none
	rawID     json.RawMessage // as sent
	method    string
	version   json.RawMessage // "jsonrpc", as sent
	arguments json.RawMessage // params.arguments, checked once method is known
}

// readObject reads the message's members, its '{' read, checking every
// object in them but params.arguments, which it keeps.
func (m *message) readObject(dec *json.Decoder) *messageError {
	return readMembers(dec, func(key string) *messageError {
		var err error
		switch key {
		case "id":
			err = dec.Decode(&m.rawID)
		case "jsonrpc":
			err = dec.Decode(&m.version)
		case "method":
			var raw json.RawMessage
			if err = dec.Decode(&raw); err == nil {
				_ = json.Unmarshal(raw, &m.method) // a method that is not a string is the SDK's to refuse
			}
		case "params":
			return m.readParams(dec)
		default:
			return checkValue(dec)
		}
		if err != nil {
			return parseError(err)
		}
		return nil
	})
}

// readParams reads the params, keeping their arguments unchecked.
func (m *message) readParams(dec *json.Decoder) *messageError {
	tok, err := dec.Token()
	if err != nil {
		return parseError(err)
	}
	if tok != json.Delim('{') {
		return checkRest(dec, tok)
	}
	return readMembers(dec, func(key string) *messageError {
		if key != "arguments" {
			return checkValue(dec)
		}
		if err := dec.Decode(&m.arguments); err != nil {
			return parseError(err)
		}
		return nil
	})
}

// check checks the id, the version, and the arguments of any method but
// tools/call, whose tool checks its own; a refusal carries the id if it
// is sound.
func (m *message) check() *messageError {
	if m.rawID != nil && string(m.rawID) != "null" {
		if m.id = canonicalID(m.rawID); m.id == nil {
			return &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the id %.40s is not a string or an integer of at most 2^53", m.rawID)}
		}
	}
	if string(m.version) != `"2.0"` {
		// The SDK's reader fails on it, ending the session.
		return &messageError{code: codeInvalidRequest, id: m.id, msg: `Invalid Request: a message must have "jsonrpc": "2.0"`}
	}
	if m.arguments != nil && m.method != "tools/call" {
		if refusal := checkValue(json.NewDecoder(bytes.NewReader(m.arguments))); refusal != nil {
			refusal.id = m.id
			return refusal
		}
	}
	return nil
}

// readMembers reads the members of an object, its '{' read, refusing a
// key given twice or two keys that differ only by case; value reads the
// value of each key from dec.
func readMembers(dec *json.Decoder, value func(key string) *messageError) *messageError {
	folded := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return parseError(err)
		}
		key := tok.(string) // the decoder allows nothing else here
		if other, ok := folded[memtool.FoldKey(key)]; ok {
			if other == key {
				return &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the key %q is given twice in one object", key)}
			}
			return &messageError{code: codeInvalidRequest, msg: fmt.Sprintf("Invalid Request: the keys %q and %q of one object differ only by case", other, key)}
		}
		folded[memtool.FoldKey(key)] = key
		if refusal := value(key); refusal != nil {
			return refusal
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return parseError(err)
	}
	return nil
}

// checkValue reads the next value of dec, checking every object in it.
func checkValue(dec *json.Decoder) *messageError {
	tok, err := dec.Token()
	if err != nil {
		return parseError(err)
	}
	return checkRest(dec, tok)
}

// checkRest reads the rest of the value whose first token is tok.
func checkRest(dec *json.Decoder, tok json.Token) *messageError {
	switch tok {
	case json.Delim('{'):
		return readMembers(dec, func(string) *messageError { return checkValue(dec) })
	case json.Delim('['):
		for dec.More() {
			if refusal := checkValue(dec); refusal != nil {
				return refusal
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return parseError(err)
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
