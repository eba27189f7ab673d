package server

import (
	"encoding/json"
	"testing"
)

// oracleCommand is what commandOf promises: the "command" field as
// json.Unmarshal fills it.
func oracleCommand(line []byte) string {
	if line[0] == '[' {
		return "turn"
	}
	var in struct {
		Command string `json:"command"`
	}
	json.Unmarshal(line, &in)
	switch in.Command {
	case "view", "create", "str_replace", "insert", "delete", "rename":
		return in.Command
	}
	return "invalid"
}

var commandLines = []string{
	`{"command":"view","path":"/memories"}`,
	` { "path" : "/m" , "command" : "create" , "file_text" : "x\"command\":\"delete\"" } `,
	`{"COMMAND":"rename"}`,
	`{"command":"view","command":"insert"}`,
	`{"command":"view","command":5}`,
	`{"command":"view","command":null}`,
	`{"comm\u0061nd":"delete"}`,
	`{"command":"vi\u0065w"}`,
	`{"a":{"command":"delete"},"b":[1,{"c":"]"}],"command":"str_replace"}`,
	`{"command":"view"`,
	`{"command":"view"}x`,
	`"view"`,
	`5`,
	`{}`,
	`{"a":true,"b":false,"c":null,"d":-1.5e3,"command":"delete"}`,
	`[{"command":"view"}]`,
	`{"command":"nope"}`,
}

func TestCommandOf(t *testing.T) {
	for _, l := range commandLines {
		if got, want := commandOf([]byte(l)), oracleCommand([]byte(l)); got != want {
			t.Errorf("commandOf(%s) = %q, want %q", l, got, want)
		}
	}
}

func FuzzCommandOf(f *testing.F) {
	for _, l := range commandLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) == 0 {
			return
		}
		if got, want := commandOf(line), oracleCommand(line); got != want {
			t.Errorf("commandOf(%q) = %q, want %q", line, got, want)
		}
	})
}
