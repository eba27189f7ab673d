package memtool_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/battery"
)

// seedToolInputs returns realistic tool inputs: the command lines of the
// reference battery (without their "_" comment keys) and the commands of the
// hostile-input corpus, raw wire bytes included.
func seedToolInputs(tb testing.TB) [][]byte {
	tb.Helper()
	out := battery.Inputs(tb)
	for _, h := range seedHostileLines(tb) {
		out = append(out, h.Cmd)
		if h.RawJSON != "" {
			out = append(out, []byte(h.RawJSON))
		}
	}
	return out
}

type seedHostileLine struct {
	Cmd     json.RawMessage `json:"cmd"`
	PathB64 string          `json:"path_b64"`
	RawJSON string          `json:"raw_json"`
}

func seedHostileLines(tb testing.TB) []seedHostileLine {
	tb.Helper()
	var out []seedHostileLine
	for _, line := range battery.Lines(tb, "testdata/hostile-paths.jsonl") {
		var h seedHostileLine
		if err := json.Unmarshal(line, &h); err != nil {
			tb.Fatalf("hostile-paths.jsonl: %v", err)
		}
		out = append(out, h)
	}
	return out
}

// seedPaths returns every path of the seed inputs, and the raw bytes of
// the hostile corpus's invalid-UTF-8 paths.
func seedPaths(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, in := range seedToolInputs(tb) {
		var obj map[string]any
		if json.Unmarshal(in, &obj) != nil {
			continue
		}
		for _, k := range []string{"path", "old_path", "new_path"} {
			if s, ok := obj[k].(string); ok {
				out = append(out, s)
			}
		}
	}
	for _, h := range seedHostileLines(tb) {
		if h.PathB64 != "" {
			raw, err := base64.StdEncoding.DecodeString(h.PathB64)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, string(raw))
		}
	}
	return out
}

// knownParams are the parameter names of every command.
var knownParams = []string{
	"command", "path", "view_range", "file_text", "old_str", "new_str",
	"insert_line", "insert_text", "old_path", "new_path",
}

// commandJSON re-marshals a parsed command from its typed fields.
func commandJSON(t *testing.T, c memtool.Command) []byte {
	t.Helper()
	m := map[string]any{"command": c.Name()}
	switch c := c.(type) {
	case *memtool.View:
		m["path"] = c.Path
		if c.ViewRange != nil {
			m["view_range"] = c.ViewRange[:]
		}
	case *memtool.Create:
		m["path"], m["file_text"] = c.Path, c.FileText
	case *memtool.StrReplace:
		m["path"], m["old_str"], m["new_str"] = c.Path, c.OldStr, c.NewStr
	case *memtool.Insert:
		m["path"], m["insert_line"], m["insert_text"] = c.Path, c.InsertLine, c.InsertText
	case *memtool.Delete:
		m["path"] = c.Path
	case *memtool.Rename:
		m["old_path"], m["new_path"] = c.OldPath, c.NewPath
	default:
		t.Fatalf("ParseCommand returned a %T", c)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stdlibView is how a plain encoding/json consumer of the same input (an
// audit log, another handler) finds the parameters: struct fields match keys
// case-insensitively, as bytes.EqualFold does.
type stdlibView struct {
	Command    json.RawMessage `json:"command"`
	Path       json.RawMessage `json:"path"`
	ViewRange  json.RawMessage `json:"view_range"`
	FileText   json.RawMessage `json:"file_text"`
	OldStr     json.RawMessage `json:"old_str"`
	NewStr     json.RawMessage `json:"new_str"`
	InsertLine json.RawMessage `json:"insert_line"`
	InsertText json.RawMessage `json:"insert_text"`
	OldPath    json.RawMessage `json:"old_path"`
	NewPath    json.RawMessage `json:"new_path"`
}

// agreesWithStdlib reports how the typed command differs from what
// encoding/json reads from the same input ("" if it does not).
func agreesWithStdlib(input []byte, c memtool.Command) string {
	var w stdlibView
	if err := json.Unmarshal(input, &w); err != nil {
		return "encoding/json cannot decode it: " + err.Error()
	}
	var got, want []any
	add := func(typed any, raw json.RawMessage, zero any) {
		v := reflect.New(reflect.TypeOf(zero))
		if len(raw) > 0 {
			json.Unmarshal(raw, v.Interface())
		}
		got, want = append(got, typed), append(want, v.Elem().Interface())
	}
	add(c.Name(), w.Command, "")
	switch c := c.(type) {
	case *memtool.View:
		add(c.Path, w.Path, "")
		var vr *[2]float64
		if c.ViewRange != nil {
			vr = &[2]float64{float64(c.ViewRange[0]), float64(c.ViewRange[1])}
		}
		add(vr, w.ViewRange, vr)
	case *memtool.Create:
		add(c.Path, w.Path, "")
		add(c.FileText, w.FileText, "")
	case *memtool.StrReplace:
		add(c.Path, w.Path, "")
		add(c.OldStr, w.OldStr, "")
		add(c.NewStr, w.NewStr, "")
	case *memtool.Insert:
		add(c.Path, w.Path, "")
		add(float64(c.InsertLine), w.InsertLine, 0.0)
		add(c.InsertText, w.InsertText, "")
	case *memtool.Delete:
		add(c.Path, w.Path, "")
	case *memtool.Rename:
		add(c.OldPath, w.OldPath, "")
		add(c.NewPath, w.NewPath, "")
	}
	if !reflect.DeepEqual(got, want) {
		return "memtool read " + jsonString(got) + " but encoding/json reads " + jsonString(want)
	}
	return ""
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// topLevelKeys lists the keys of the JSON object in input, unescaped, in
// order, duplicates kept; ok is false if input does not start with an object.
func topLevelKeys(input []byte) (keys []string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(input))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, false
		}
		key, isKey := tok.(string)
		if !isKey {
			return keys, false
		}
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys, false
		}
	}
	return keys, true
}

func FuzzParseCommand(f *testing.F) {
	for _, in := range seedToolInputs(f) {
		f.Add(in)
	}
	for _, tc := range parseCases {
		f.Add([]byte(tc.in))
	}
	for _, tc := range refuseCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		c, err := memtool.ParseCommand(input)
		if err != nil {
			var ie *memtool.InputError
			if !errors.As(err, &ie) || ie.Reason == "" {
				t.Fatalf("error %v (%T) is not an *InputError with a reason", err, err)
			}
			return
		}
		if c == nil {
			t.Fatal("ParseCommand returned neither a command nor an error")
		}
		// One JSON object and nothing else.
		if !json.Valid(input) {
			t.Fatalf("accepted input that is not exactly one JSON value: %q", input)
		}
		keys, ok := topLevelKeys(input)
		if !ok {
			t.Fatalf("accepted input that is not a JSON object: %q", input)
		}
		for i, k := range keys {
			for _, other := range keys[:i] {
				if strings.EqualFold(k, other) {
					t.Fatalf("accepted keys %q and %q, which are equal up to case", other, k)
				}
			}
			for _, known := range knownParams {
				if k != known && strings.EqualFold(k, known) {
					t.Fatalf("accepted key %q, a case variant of %q", k, known)
				}
			}
		}
		if diff := agreesWithStdlib(input, c); diff != "" {
			t.Fatalf("parser differential on %q: %s", input, diff)
		}
		// Re-marshalling the typed fields gives the same command.
		again := commandJSON(t, c)
		c2, err := memtool.ParseCommand(again)
		if err != nil {
			t.Fatalf("re-marshalled %s is refused: %v", again, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the command:\n in: %#v\nout: %#v (via %s)", c, c2, again)
		}
	})
}

// parseCases are inputs with the exact answer ParseCommand must give:
// the command (as commandJSON spells it) or the error message.
var parseCases = []struct {
	name string
	in   string
	want string // re-marshalled command, or the error text
	err  bool
}{
	{"view", `{"command":"view","path":"/memories"}`, `{"command":"view","path":"/memories"}`, false},
	{"view range", `{"command":"view","path":"/memories/a","view_range":[2,-1]}`, `{"command":"view","path":"/memories/a","view_range":[2,-1]}`, false},
	{"view range null is absent", `{"command":"view","path":"/memories/a","view_range":null}`, `{"command":"view","path":"/memories/a"}`, false},
	{"create", `{"command":"create","path":"/memories/a","file_text":"x\n"}`, `{"command":"create","file_text":"x\n","path":"/memories/a"}`, false},
	{"str_replace without new_str", `{"command":"str_replace","path":"/memories/a","old_str":"x"}`, `{"command":"str_replace","new_str":"","old_str":"x","path":"/memories/a"}`, false},
	{"str_replace new_str null", `{"command":"str_replace","path":"/memories/a","old_str":"x","new_str":null}`, `{"command":"str_replace","new_str":"","old_str":"x","path":"/memories/a"}`, false},
	{"insert_line 2", `{"command":"insert","path":"/memories/a","insert_line":2,"insert_text":"t"}`, `{"command":"insert","insert_line":2,"insert_text":"t","path":"/memories/a"}`, false},
	{"insert_line 2.0", `{"command":"insert","path":"/memories/a","insert_line":2.0,"insert_text":"t"}`, `{"command":"insert","insert_line":2,"insert_text":"t","path":"/memories/a"}`, false},
	{"insert_line 1e0", `{"command":"insert","path":"/memories/a","insert_line":1e0,"insert_text":"t"}`, `{"command":"insert","insert_line":1,"insert_text":"t","path":"/memories/a"}`, false},
	{"insert_line 300e-2", `{"command":"insert","path":"/memories/a","insert_line":300e-2,"insert_text":"t"}`, `{"command":"insert","insert_line":3,"insert_text":"t","path":"/memories/a"}`, false},
	{"insert_line zero with a huge exponent", `{"command":"insert","path":"/memories/a","insert_line":-0.0e99999999999999999999,"insert_text":"t"}`, `{"command":"insert","insert_line":0,"insert_text":"t","path":"/memories/a"}`, false},
	{"insert_line int64 max", `{"command":"insert","path":"/memories/a","insert_line":9223372036854775807,"insert_text":"t"}`, `{"command":"insert","insert_line":9223372036854775807,"insert_text":"t","path":"/memories/a"}`, false},
	{"insert_line int64 min as 0.1e", `{"command":"insert","path":"/memories/a","insert_line":-0.9223372036854775808e19,"insert_text":"t"}`, `{"command":"insert","insert_line":-9223372036854775808,"insert_text":"t","path":"/memories/a"}`, false},
	{"delete", `{"command":"delete","path":"/memories/a"}`, `{"command":"delete","path":"/memories/a"}`, false},
	{"rename", `{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}`, `{"command":"rename","new_path":"/memories/b","old_path":"/memories/a"}`, false},
	{"foreign parameter ignored", `{"command":"delete","path":"/memories/a","file_text":"x"}`, `{"command":"delete","path":"/memories/a"}`, false},
	{"escaped key", `{"command":"view","pa\u0074h":"/memories"}`, `{"command":"view","path":"/memories"}`, false},
	{"whitespace around", " \n{\"command\":\"view\",\"path\":\"/memories\"}\n ", `{"command":"view","path":"/memories"}`, false},

	{"unknown command", `{"command":"foo","path":"/memories"}`, `Unknown command: foo`, true},
	{"command case", `{"command":"VIEW","path":"/memories"}`, `Unknown command: VIEW`, true},
	{"command toString", `{"command":"toString"}`, `Unknown command: toString`, true},
	// Cut at 64 bytes, the name is not cut inside a character: the answer stays UTF-8.
	{"long command cut in a character", `{"command":"` + strings.Repeat("a", 63) + `ééé"}`, "Unknown command: " + strings.Repeat("a", 63) + "…", true},
	{"missing command", `{"path":"/memories"}`, `Missing required parameter 'command'`, true},
	{"command null", `{"command":null,"path":"/memories"}`, `Invalid parameter 'command': expected a string, got null`, true},
	{"command number", `{"command":1}`, `Invalid parameter 'command': expected a string, got the number 1`, true},
	{"missing path", `{"command":"view"}`, `Missing required parameter 'path' for command 'view'`, true},
	{"missing file_text", `{"command":"create","path":"/memories/a"}`, `Missing required parameter 'file_text' for command 'create'`, true},
	{"missing old_str", `{"command":"str_replace","path":"/memories/a","new_str":"x"}`, `Missing required parameter 'old_str' for command 'str_replace'`, true},
	{"missing new_path", `{"command":"rename","old_path":"/memories/a"}`, `Missing required parameter 'new_path' for command 'rename'`, true},
	{"path number", `{"command":"view","path":123}`, `Invalid parameter 'path' for command 'view': expected a string, got the number 123`, true},
	{"path null", `{"command":"view","path":null}`, `Invalid parameter 'path' for command 'view': expected a string, got null`, true},
	{"file_text null", `{"command":"create","path":"/memories/a","file_text":null}`, `Invalid parameter 'file_text' for command 'create': expected a string, got null`, true},
	{"file_text bool", `{"command":"create","path":"/memories/a","file_text":true}`, `Invalid parameter 'file_text' for command 'create': expected a string, got a boolean`, true},
	{"old_str object", `{"command":"str_replace","path":"/memories/a","old_str":{}}`, `Invalid parameter 'old_str' for command 'str_replace': expected a string, got an object`, true},
	{"new_str array", `{"command":"str_replace","path":"/memories/a","old_str":"x","new_str":["y"]}`, `Invalid parameter 'new_str' for command 'str_replace': expected a string, got an array`, true},
	{"old_path number", `{"command":"rename","old_path":1,"new_path":"/memories/b"}`, `Invalid parameter 'old_path' for command 'rename': expected a string, got the number 1`, true},
	{"insert_line 1.5", `{"command":"insert","path":"/memories/a","insert_line":1.5,"insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got the number 1.5`, true},
	{"insert_line string", `{"command":"insert","path":"/memories/a","insert_line":"2","insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got a string`, true},
	{"insert_line 1e30", `{"command":"insert","path":"/memories/a","insert_line":1e30,"insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got the number 1e30`, true},
	{"insert_line tiny fraction", `{"command":"insert","path":"/memories/a","insert_line":1e-400,"insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got the number 1e-400`, true},
	{"insert_line fraction past float precision", `{"command":"insert","path":"/memories/a","insert_line":1.0000000000000001,"insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got the number 1.0000000000000001`, true},
	{"insert_line below int64", `{"command":"insert","path":"/memories/a","insert_line":-9223372036854775809,"insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got the number -9223372036854775809`, true},
	{"view_range fraction past float precision", `{"command":"view","path":"/memories/a","view_range":[9007199254740993.5,-1]}`, `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got [9007199254740993.5,-1]`, true},
	{"insert_line null", `{"command":"insert","path":"/memories/a","insert_line":null,"insert_text":"t"}`, `Invalid parameter 'insert_line' for command 'insert': expected an integer, got null`, true},
	{"view_range one", `{"command":"view","path":"/memories/a","view_range":[1]}`, `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got [1]`, true},
	{"view_range three", `{"command":"view","path":"/memories/a","view_range":[1,2,3]}`, `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got [1,2,3]`, true},
	{"view_range fraction", `{"command":"view","path":"/memories/a","view_range":[1,1.5]}`, `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got [1,1.5]`, true},
	{"view_range string", `{"command":"view","path":"/memories/a","view_range":"1,2"}`, `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got "1,2"`, true},
	{"view_range of bytes not UTF-8", "{\"command\":\"view\",\"path\":\"/memories/a\",\"view_range\":\"\xff\"}", `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got a string`, true},
	{"view_range with a bidi override", "{\"command\":\"view\",\"path\":\"/memories/a\",\"view_range\":[\"\u202e\",1]}", `Invalid parameter 'view_range' for command 'view': expected a list of two integers [start_line, end_line], got an array`, true},
	{"not an object", `["view","/memories"]`, `Tool input must be a JSON object`, true},
	{"a string", `"view"`, `Tool input must be a JSON object`, true},
	{"two objects", `{"command":"view","path":"/memories"} {}`, `Tool input must be a single JSON object`, true},
	{"trailing number", `{"command":"view","path":"/memories"} 1`, `Tool input must be a single JSON object`, true},
	{"duplicate key", `{"command":"view","path":"/memories/a","path":"/etc/passwd"}`, `Duplicate parameter 'path' in tool input`, true},
	{"duplicate escaped key", `{"command":"view","path":"/memories/a","p\u0061th":"/etc/passwd"}`, `Duplicate parameter 'path' in tool input`, true},
	{"case variant key", `{"command":"view","Path":"/memories"}`, `Unknown parameter 'Path' (did you mean 'path'?)`, true},
	{"case variant command key", `{"COMMAND":"view","path":"/memories"}`, `Unknown parameter 'COMMAND' (did you mean 'command'?)`, true},
	{"two case variants", `{"command":"view","path":"/memories","PATH":"/x"}`, `Parameters 'path' and 'PATH' differ only by case`, true},
	{"duplicate key of control characters", `{"command":"view","path":"/memories","a\u001b[2J\u202e":1,"a\u001b[2J\u202e":2}`, `Duplicate parameter '"a\x1b[2J\u202e"' in tool input`, true},
	{"case variants of control characters", `{"command":"view","path":"/memories","x\u0007":1,"X\u0007":2}`, `Parameters '"x\a"' and '"X\a"' differ only by case`, true},
}

func TestParseCommandMessages(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := memtool.ParseCommand([]byte(tc.in))
			if tc.err {
				var ie *memtool.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("ParseCommand(%s) = %#v, %v; want the error %q", tc.in, c, err, tc.want)
				}
				if ie.Reason != tc.want || err.Error() != tc.want {
					t.Fatalf("ParseCommand(%s) error:\n got %q\nwant %q", tc.in, err.Error(), tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCommand(%s): %v", tc.in, err)
			}
			if got := string(commandJSON(t, c)); got != tc.want {
				t.Fatalf("ParseCommand(%s):\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

const validViewInput = `{"command":"view","path":"/memories"}`

// refuseCases are inputs the parser must refuse, whatever it says about them.
var refuseCases = []struct{ name, in string }{
	{"empty", ``},
	{"null", `null`},
	{"truncated", `{"command":"view","path":"/memories"`},
	{"trailing garbage", validViewInput + ` xyz`},
	{"trailing brace", validViewInput + `}`},
	{"trailing bracket", validViewInput + `]`},
	{"trailing quote", validViewInput + ` "`},
	{"trailing NUL", validViewInput + "\x00"},
	{"byte order mark", "\ufeff" + validViewInput},
	// Keys that encoding/json would match to a parameter by Unicode
	// case folding (ſ folds to s, K to k): a consumer decoding the
	// same input into a struct would see new_str.
	{"long s variant of new_str", `{"command":"str_replace","path":"/memories/a","old_str":"x","new_ſtr":"y"}`},
	{"long s variant of insert_text", `{"command":"insert","path":"/memories/a","insert_line":0,"insert_text":"y","inſert_text":"z"}`},
	{"long s variant and the key", `{"command":"str_replace","path":"/memories/a","old_str":"x","new_str":"y","new_ſtr":"z"}`},
}

func TestParseCommandRefuses(t *testing.T) {
	for _, tc := range refuseCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := memtool.ParseCommand([]byte(tc.in))
			var ie *memtool.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseCommand(%q) = %#v, %v; want an *InputError", tc.in, c, err)
			}
		})
	}
}

// The missing parameter named must not depend on map iteration order.
func TestParseCommandMissingIsDeterministic(t *testing.T) {
	for _, in := range []string{`{"command":"insert"}`, `{"command":"rename"}`, `{"command":"create"}`, `{"command":"str_replace"}`} {
		_, first := memtool.ParseCommand([]byte(in))
		if first == nil {
			t.Fatalf("ParseCommand(%s) accepted", in)
		}
		for range 50 {
			if _, err := memtool.ParseCommand([]byte(in)); err == nil || err.Error() != first.Error() {
				t.Fatalf("ParseCommand(%s) answers %q, then %v", in, first, err)
			}
		}
	}
}

func TestParseCommandSizeLimit(t *testing.T) {
	prefix := `{"command":"create","path":"/memories/big.txt","file_text":"`
	fit := prefix + strings.Repeat("A", memtool.MaxInputBytes-len(prefix)-2) + `"}`
	if len(fit) != memtool.MaxInputBytes {
		t.Fatalf("test input is %d bytes", len(fit))
	}
	if _, err := memtool.ParseCommand([]byte(fit)); err != nil {
		t.Fatalf("input of exactly MaxInputBytes refused: %v", err)
	}
	over := prefix + strings.Repeat("A", memtool.MaxInputBytes-len(prefix)-1) + `"}`
	_, err := memtool.ParseCommand([]byte(over))
	want := "Tool input is too large: 8388609 bytes, more than the limit of 8388608 bytes"
	if err == nil || err.Error() != want {
		t.Fatalf("input of MaxInputBytes+1: got %v, want %q", err, want)
	}
}
