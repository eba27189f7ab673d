// Package battery gives tests the reference battery's tool inputs
// (testdata/reference/cases.jsonl): every command line, without the setup
// steps (which act on a file system) and without the "_" comment keys.
package battery

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Inputs returns the battery's tool inputs in order, as the model would
// send them.
func Inputs(t testing.TB) [][]byte {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	f, err := os.Open(filepath.Join(filepath.Dir(here), "..", "..", "testdata", "reference", "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var c map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if _, ok := c["setup"]; ok {
			continue
		}
		input := map[string]json.RawMessage{}
		for k, v := range c {
			if !strings.HasPrefix(k, "_") {
				input[k] = v
			}
		}
		b, err := json.Marshal(input)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("only %d battery inputs", len(out))
	}
	return out
}
