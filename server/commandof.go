package server

import (
	"bytes"
	"encoding/json"
)

// commandOf names the command of a line, for metrics: one of the six,
// "turn" for an array, "invalid" otherwise. It reads what
// json.Unmarshal would put in a field "command" (keys matched without
// case, the last one winning), without decoding the rest of the line.
func commandOf(line []byte) string {
	if line[0] == '[' {
		return "turn"
	}
	command, ok := scanCommand(line)
	if !ok { // escapes: leave them to the decoder
		var in struct {
			Command string `json:"command"`
		}
		json.Unmarshal(line, &in)
		command = []byte(in.Command)
	}
	switch string(command) {
	case "view":
		return "view"
	case "create":
		return "create"
	case "str_replace":
		return "str_replace"
	case "insert":
		return "insert"
	case "delete":
		return "delete"
	case "rename":
		return "rename"
	}
	return "invalid"
}

// scanCommand returns the value of the last member "command" (any case)
// of the JSON object line, if it is a string; nothing if line is not a
// valid JSON object. ok is false if a key or that value has an escape.
func scanCommand(line []byte) (command []byte, ok bool) {
	if !json.Valid(line) {
		return nil, true
	}
	i := skipSpace(line, 0)
	if line[i] != '{' {
		return nil, true
	}
	i++
	for {
		i = skipSpace(line, i)
		if line[i] == '}' {
			return command, true
		}
		key, end, escaped := jsonString(line, i)
		if escaped {
			return nil, false
		}
		i = skipSpace(line, end)
		i = skipSpace(line, i+1) // the colon
		if bytes.EqualFold(key, []byte("command")) && line[i] == '"' {
			val, end, escaped := jsonString(line, i)
			if escaped {
				return nil, false
			}
			command, i = val, end
		} else {
			i = skipValue(line, i)
		}
		i = skipSpace(line, i)
		if line[i] == '}' {
			return command, true
		}
		i++ // the comma
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonString reads the valid JSON string at b[i]: its raw content, the
// index after it, and whether it holds an escape.
func jsonString(b []byte, i int) (s []byte, end int, escaped bool) {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return b[i+1 : j], j + 1, escaped
		}
	}
}

// skipValue returns the index after the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for {
		switch b[i] {
		case '"':
			_, i, _ = jsonString(b, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
}
