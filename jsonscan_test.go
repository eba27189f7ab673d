package memtool

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// parseSlow is ParseCommand without its fast path: encoding/json decodes
// every input.
func parseSlow(input []byte) (Command, error) {
	if len(input) > MaxInputBytes {
		return ParseCommand(input)
	}
	obj, err := decodeObject(string(input))
	if err != nil {
		return nil, err
	}
	return parseMembers(obj)
}

// fastSeeds are tool inputs that reach every branch of the fast path, and
// many that it must hand to encoding/json.
var fastSeeds = []string{
	`{"command":"view","path":"/memories"}`,
	` {"command" : "view" , "path":"/memories/a", "view_range" : [ 1 , -1 ] } `,
	`{"command":"view","path":"/memories/a","view_range":[1,2,3]}`,
	`{"command":"view","path":"/memories/a","view_range":[1.0,2e0]}`,
	`{"command":"view","path":"/memories/a","view_range":[]}`,
	`{"command":"view","path":"/memories/a","view_range":null}`,
	`{"command":"view","path":"/memories/a","view_range":"1,2"}`,
	`{"command":"view","path":"/memories/a","view_range":[1,[2]]}`,
	`{"command":"create","path":"/memories/a","file_text":"line\n\t\"q\" \\ \/ \b\f\r \u00e9 \ud83d\ude00 \ud83d x \ude00 \u0000"}`,
	"{\"command\":\"create\",\"path\":\"/memories/a\",\"file_text\":\"bad \xff\xfe utf8 \xe2\x82\"}",
	"{\"command\":\"create\",\"path\":\"/memories/a\",\"file_text\":\"é ünï 😀\"}",
	`{"command":"create","path":"/memories/a","file_text":"x","extra":{"a":[1,{"b":null}],"c":true,"d":false,"e":-0.5e-3}}`,
	`{"command":"str_replace","path":"/memories/a","old_str":"x"}`,
	`{"command":"str_replace","path":"/memories/a","old_str":"x","new_str":null}`,
	`{"command":"str_replace","path":"/memories/a","old_str":"x","new_str":1}`,
	`{"command":"insert","path":"/memories/a","insert_line":2.0,"insert_text":"t"}`,
	`{"command":"insert","path":"/memories/a","insert_line":1e30,"insert_text":"t"}`,
	`{"command":"insert","path":"/memories/a","insert_line":-3,"insert_text":"t"}`,
	`{"command":"insert","path":"/memories/a","insert_line":"2","insert_text":"t"}`,
	`{"command":"delete","path":"/memories/a"}`,
	`{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}`,
	`{"command":"rename","old_path":"/memories/a"}`,
	`{"command":"view","path":"/memories","path":"/x"}`,
	`{"command":"view","path":"/memories","PATH":"/x"}`,
	`{"command":"view","Path":"/memories"}`,
	`{"command":"view","pa\u0074h":"/memories"}`,
	`{"command":"view","paTh":1,"x":2}`,
	`{"command":"view","ſ":1,"S":2}`,
	`{"command":"view","path":"/memories","a":1,"A":2}`,
	`{"command":"vıew","path":"/memories"}`,
	`{"command":null}`,
	`{"command":1}`,
	`{"command":"foo bar"}`,
	`{}`,
	`[]`,
	`"view"`,
	``,
	`{`,
	`{"command":"view","path":"/memories"} {}`,
	`{"command":"view","path":"/memories"}x`,
	`{"command":"view","path":"/memories",}`,
	`{"command":"view" "path":"/memories"}`,
	`{"command":"view","path":"/memories\x01"}`,
	`{"command":"view","path":"\u12"}`,
	`{"command":"view","path":"\q"}`,
	`{"command":"view","path":01}`,
	`{"command":"view","path":1.}`,
	`{"command":"view","path":1e}`,
	`{"command":"view","path":-}`,
	`{"command":"view","path":tru}`,
	`{"command":"view","path":nul}`,
	`{"command":"view","x":[1,2,}`,
	`{"command":"view","x":{"a"}}`,
	`{"command":"view","x":{"a":1,}}`,
	`{"command":"view","x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"command":"view","path":"/memories"}`,
}

// fastInputs are the seeds, the corpus's inputs and the reference
// battery's command lines.
func fastInputs(tb testing.TB) [][]byte {
	var out [][]byte
	for _, s := range fastSeeds {
		out = append(out, []byte(s))
	}
	for _, file := range []string{"testdata/hostile-paths.jsonl", "testdata/reference/cases.jsonl"} {
		f, err := os.Open(file)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			out = append(out, []byte(sc.Text()))
			var line map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			for _, k := range []string{"cmd", "input"} {
				if raw := line[k]; len(raw) > 0 {
					out = append(out, raw)
				}
			}
			var rawJSON string
			if json.Unmarshal(line["raw_json"], &rawJSON) == nil && rawJSON != "" {
				out = append(out, []byte(rawJSON))
			}
		}
		f.Close()
	}
	return out
}

// checkFastAgrees fails if ParseCommand, fast path and all, answers input
// otherwise than encoding/json's path alone.
func checkFastAgrees(t *testing.T, input []byte) {
	t.Helper()
	got, gerr := ParseCommand(input)
	want, werr := parseSlow(input)
	if !reflect.DeepEqual(got, want) || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("ParseCommand(%q) = %#v, %v; encoding/json's path gives %#v, %v", input, got, gerr, want, werr)
	}
}

func TestFastParseAgrees(t *testing.T) {
	inputs := fastInputs(t)
	if len(inputs) < 200 {
		t.Fatalf("only %d inputs: the corpus was not read", len(inputs))
	}
	fast := 0
	for _, in := range inputs {
		checkFastAgrees(t, in)
		var buf [maxFastMembers]member
		if _, ok := fastMembers(string(in), &buf); ok {
			fast++
		}
	}
	// The fast path must actually take the common inputs.
	if fast < len(inputs)/2 {
		t.Errorf("the fast path took %d of %d inputs", fast, len(inputs))
	}
}

func FuzzFastParse(f *testing.F) {
	for _, in := range fastInputs(f) {
		f.Add(in)
	}
	f.Fuzz(checkFastAgrees)
}

// unquote reads every string as encoding/json does, and the scanner
// takes as a string exactly what encoding/json does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a"`, `"\n\"\\\/\b\f\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, "\"\xff\xc3\"", `"\ud83d\ud83d\ude00"`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want string
		if raw == "" || raw[0] != '"' || strings.TrimSpace(raw) != raw {
			return
		}
		sc := jsonScanner{s: raw}
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			if sc.str() && sc.i == len(raw) {
				t.Fatalf("the scanner reads %q as one string, which encoding/json refuses: %v", raw, err)
			}
			return
		}
		sc = jsonScanner{s: raw}
		if !sc.str() || sc.i != len(raw) {
			t.Fatalf("the scanner refuses %q, which encoding/json reads", raw)
		}
		if got, ok := unquote(raw); !ok || got != want {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json reads %q", raw, got, ok, want)
		}
	})
}
