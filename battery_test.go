package memtool_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
)

// The reference battery (testdata/reference/cases.jsonl) is replayed through
// Memory on the file store. Every answer must equal the TypeScript SDK's
// recorded one (ts-expected.jsonl), except on the lines listed in
// deviations.jsonl, which carry memtool's own expected answer and the
// deviation (D1–D16, see DEVIATIONS.md) that explains the difference.

var writeCandidates = flag.String("write-deviation-candidates", "", "write every line that differs from the TS answer to this file, for review")

type battLine struct {
	I         int             `json:"i"`
	Setup     string          `json:"setup,omitempty"`
	OK        bool            `json:"ok"`
	Content   json.RawMessage `json:"content,omitempty"`
	Tree      []treeEntry     `json:"tree,omitempty"`
	Deviation string          `json:"deviation,omitempty"`
	Why       string          `json:"why,omitempty"`
}

type treeEntry struct {
	Path   string  `json:"path"`
	Type   string  `json:"type"`
	Mode   string  `json:"mode,omitempty"`
	Size   *int64  `json:"size,omitempty"`
	Text   *string `json:"text,omitempty"`
	B64    string  `json:"b64,omitempty"`
	Large  bool    `json:"large,omitempty"`
	Target string  `json:"target,omitempty"`
}

// validDeviation reports whether ids is a comma-separated list of rows of
// the deviation table (D1–D16).
func validDeviation(ids string) bool {
	for _, id := range strings.Split(ids, ",") {
		var n int
		if _, err := fmt.Sscanf(id, "D%d", &n); err != nil || n < 1 || n > 16 || id != fmt.Sprintf("D%d", n) {
			return false
		}
	}
	return true
}

func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: %v: %s", name, err, line)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReferenceBattery(t *testing.T) {
	cases := readJSONL[map[string]json.RawMessage](t, "testdata/reference/cases.jsonl")
	expected := readJSONL[battLine](t, "testdata/reference/ts-expected.jsonl")
	devList := readJSONL[battLine](t, "testdata/reference/deviations.jsonl")
	if len(cases) != len(expected) {
		t.Fatalf("%d cases but %d expected answers", len(cases), len(expected))
	}
	deviations := map[int]battLine{}
	for _, d := range devList {
		if !validDeviation(d.Deviation) || d.Why == "" {
			t.Errorf("deviations.jsonl line i=%d: deviation %q is not a list of D1–D16 or has no why", d.I, d.Deviation)
		}
		deviations[d.I] = d
	}

	base := t.TempDir()
	root := filepath.Join(base, "memories")
	store, err := filestore.Open(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logs bytes.Buffer
	mem := memtool.New(store, &memtool.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	var candidates bytes.Buffer
	for i, c := range cases {
		want := expected[i]
		var got battLine
		if raw, ok := c["setup"]; ok {
			got = runSetup(t, base, i, raw, c)
		} else {
			input := map[string]json.RawMessage{}
			for k, v := range c {
				if !strings.HasPrefix(k, "_") {
					input[k] = v
				}
			}
			b, _ := json.Marshal(input)
			res := mem.Run(context.Background(), b)
			content, _ := json.Marshal(res.Content())
			got = battLine{I: i, OK: !res.IsError, Content: content}
			if strings.Contains(res.Text, base) {
				t.Errorf("line %d: answer reveals the host path: %q", i, res.Text)
			}
		}
		label := string(c["_c"])
		if dev, ok := deviations[i]; ok {
			if sameAnswer(got, want) {
				t.Errorf("line %d %s: listed as deviation %s but memtool now answers as the TS SDK does; drop the entry", i, label, dev.Deviation)
			}
			want = dev
		}
		if !sameAnswer(got, want) {
			t.Errorf("line %d %s:\n got: %s\nwant: %s", i, label, show(got), show(want))
			if *writeCandidates != "" {
				got.Deviation, got.Why = "D?", label
				b, _ := json.Marshal(got)
				candidates.Write(append(b, '\n'))
			}
		}
	}
	if *writeCandidates != "" {
		if err := os.WriteFile(*writeCandidates, candidates.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("unexpected internal errors were logged:\n%s", logs.String())
	}
}

func sameAnswer(got, want battLine) bool {
	if want.Setup == "tree" || got.Setup == "tree" {
		return reflect.DeepEqual(got.Tree, want.Tree)
	}
	if got.OK != want.OK {
		return false
	}
	var g, w any
	json.Unmarshal(got.Content, &g)
	json.Unmarshal(want.Content, &w)
	return reflect.DeepEqual(g, w)
}

func show(l battLine) string {
	if l.Setup == "tree" {
		b, _ := json.Marshal(l.Tree)
		return string(b)
	}
	s := string(l.Content)
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return fmt.Sprintf("ok=%v %s", l.OK, s)
}

// runSetup applies one setup step of the battery to the base directory.
func runSetup(t *testing.T, base string, i int, op json.RawMessage, c map[string]json.RawMessage) battLine {
	t.Helper()
	var name string
	json.Unmarshal(op, &name)
	str := func(k string) string {
		var s string
		json.Unmarshal(c[k], &s)
		return s
	}
	p := filepath.Join(base, filepath.FromSlash(str("path")))
	mkparent := func() {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	switch name {
	case "mkdir":
		err = os.MkdirAll(p, 0o755)
	case "write":
		mkparent()
		data := []byte(str("text"))
		if b := str("b64"); b != "" {
			data, err = base64.StdEncoding.DecodeString(b)
		}
		if err == nil {
			err = os.WriteFile(p, data, 0o644)
		}
	case "repeat":
		mkparent()
		var count int
		json.Unmarshal(c["count"], &count)
		err = os.WriteFile(p, bytes.Repeat([]byte(str("unit")), count), 0o644)
	case "truncate":
		mkparent()
		var size int64
		json.Unmarshal(c["size"], &size)
		var f *os.File
		if f, err = os.Create(p); err == nil {
			err = f.Truncate(size)
			f.Close()
		}
	case "symlink":
		mkparent()
		err = os.Symlink(strings.ReplaceAll(str("target"), "<BASE>", base), p)
	case "mkfifo":
		mkparent()
		err = syscall.Mkfifo(p, 0o644)
	case "rm":
		err = os.RemoveAll(p)
	case "tree":
		return battLine{I: i, Setup: "tree", OK: true, Tree: dumpTree(t, base)}
	default:
		t.Fatalf("line %d: unknown setup op %q", i, name)
	}
	if err != nil {
		t.Fatalf("line %d: setup %s: %v", i, name, err)
	}
	return battLine{I: i, Setup: name, OK: true}
}

// dumpTree lists every entry under base as the reference oracle does,
// leaving out the file store's own .memtool* entries.
func dumpTree(t *testing.T, base string) []treeEntry {
	var out []treeEntry
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".memtool") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			full := filepath.Join(dir, n)
			r := n
			if rel != "" {
				r = rel + "/" + n
			}
			fi, err := os.Lstat(full)
			if err != nil {
				t.Fatal(err)
			}
			mode := fmt.Sprintf("%04o", fi.Mode().Perm()|fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				target, _ := os.Readlink(full)
				out = append(out, treeEntry{Path: r, Type: "symlink", Target: strings.ReplaceAll(target, base, "<BASE>")})
			case fi.IsDir():
				out = append(out, treeEntry{Path: r, Type: "dir", Mode: mode})
				walk(full, r)
			case fi.Mode().IsRegular():
				size := fi.Size()
				e := treeEntry{Path: r, Type: "file", Mode: mode, Size: &size}
				if size <= 65536 {
					b, _ := os.ReadFile(full)
					if utf8.Valid(b) {
						s := string(b)
						e.Text = &s
					} else {
						e.B64 = base64.StdEncoding.EncodeToString(b)
					}
				} else {
					e.Large = true
				}
				out = append(out, e)
			default:
				out = append(out, treeEntry{Path: r, Type: "other", Mode: mode})
			}
		}
	}
	walk(base, "")
	return out
}
