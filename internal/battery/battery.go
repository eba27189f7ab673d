// Package battery gives tests the reference battery's tool inputs
// (testdata/reference/cases.jsonl): every command line, without the setup
// steps (which act on a file system) and without the "_" comment keys.
package battery

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// Inputs returns the battery's tool inputs in order, as the model would
// send them.
func Inputs(t testing.TB) [][]byte {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	var out [][]byte
	for _, line := range Lines(t, filepath.Join(filepath.Dir(here), "..", "..", "testdata", "reference", "cases.jsonl")) {
		var c map[string]json.RawMessage
		if err := json.Unmarshal(line, &c); err != nil {
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
	if len(out) < 100 {
		t.Fatalf("only %d battery inputs", len(out))
	}
	return out
}

// SameAnswers runs inputs through Memory on wrapped (a policy over a new
// store) and on a new memstore, and fails t for every input whose results
// differ, and if the two stores then hold different trees (read through
// wrapped): a policy that the inputs do not trip must answer as the bare
// store does, and keep what it keeps.
func SameAnswers(t testing.TB, inputs [][]byte, wrapped memtool.Store) {
	t.Helper()
	bare := memstore.New()
	plain, policy := memtool.New(bare, nil), memtool.New(wrapped, nil)
	for _, in := range inputs {
		want := plain.Run(context.Background(), in)
		if got := policy.Run(context.Background(), in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
	got, want := contents(t, wrapped), contents(t, bare)
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("after the inputs, the policy's store lacks %s (%.40q)", name, w)
		} else if g != w {
			t.Errorf("after the inputs, the policy's store holds %s as %.40q, want %.40q", name, g, w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("after the inputs, the policy's store holds %s (%.40q), which the bare store does not", name, g)
		}
	}
}

// contents is everything in s: each name mapped to "dir", or to "file:"
// and the file's content.
func contents(t testing.TB, s memtool.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	err := memtool.Walk(ctx, s, "", func(name string, fi memtool.FileInfo) error {
		switch {
		case name == "":
		case fi.IsDir():
			out[name] = "dir"
		default:
			data, err := s.ReadFile(ctx, name, math.MaxInt64)
			if err != nil {
				return err
			}
			out[name] = "file:" + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the store after the inputs: %v", err)
	}
	return out
}

// Lines returns the lines of the file name (a JSON-lines file of
// testdata), trimmed, leaving out blank lines and # comments; it fails t
// if there are none.
func Lines(t testing.TB, name string) [][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		out = append(out, bytes.Clone(line))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no lines", name)
	}
	return out
}
