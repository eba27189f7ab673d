package memtool_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/battery"
)

// The reference battery (testdata/reference/cases.jsonl) is replayed through
// Memory on the file store. Every answer must equal the TypeScript SDK's
// recorded one (ts-expected.jsonl), except on the lines listed in
// deviations.jsonl, which carry memtool's own expected answer and the
// deviation (a row of DEVIATIONS.md) that explains the difference.

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
// the deviation table (D1 to lastDeviation).
// lastDeviation is the last row of DEVIATIONS.md's table.
const lastDeviation = 22

func validDeviation(ids string) bool {
	for _, id := range strings.Split(ids, ",") {
		var n int
		if _, err := fmt.Sscanf(id, "D%d", &n); err != nil || n < 1 || n > lastDeviation || id != fmt.Sprintf("D%d", n) {
			return false
		}
	}
	return true
}

func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	var out []T
	for _, line := range battery.Lines(t, name) {
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: %v: %s", name, err, line)
		}
		out = append(out, v)
	}
	return out
}

// toolInput is a battery line without its "_" comment keys, as the model
// would send it.
func toolInput(c map[string]json.RawMessage) []byte {
	input := map[string]json.RawMessage{}
	for k, v := range c {
		if !strings.HasPrefix(k, "_") {
			input[k] = v
		}
	}
	b, _ := json.Marshal(input)
	return b
}

func TestReferenceBattery(t *testing.T) {
	replayBattery(t, filepath.Join("testdata", "reference"), *writeCandidates)
}

// replayBattery replays the battery in dir (cases.jsonl) on a new file
// store: every answer must be the TS handler's recorded one
// (ts-expected.jsonl), except on the lines of deviations.jsonl, which
// carry memtool's answer and the deviations that explain it. No answer
// may reveal the host path, and nothing may be logged as an internal
// error. With candidates, the lines that differ are written there.
func replayBattery(t *testing.T, dir, candidatesFile string) {
	cases := readJSONL[map[string]json.RawMessage](t, filepath.Join(dir, "cases.jsonl"))
	expected := readJSONL[battLine](t, filepath.Join(dir, "ts-expected.jsonl"))
	devList := readJSONL[battLine](t, filepath.Join(dir, "deviations.jsonl"))
	if len(cases) != len(expected) {
		t.Fatalf("%d cases but %d expected answers", len(cases), len(expected))
	}
	deviations := map[int]battLine{}
	for _, d := range devList {
		if !validDeviation(d.Deviation) || d.Why == "" {
			t.Errorf("%s/deviations.jsonl line i=%d: deviation %q is not a list of deviation ids (D1–D%d) or has no why", dir, d.I, d.Deviation, lastDeviation)
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
			res := mem.Run(context.Background(), toolInput(c))
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
			if candidatesFile != "" {
				got.Deviation, got.Why = "D?", label
				b, _ := json.Marshal(got)
				candidates.Write(append(b, '\n'))
			}
		}
	}
	if candidatesFile != "" {
		if err := os.WriteFile(candidatesFile, candidates.Bytes(), 0o644); err != nil {
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
	case "write", "repeat":
		mkparent()
		var data []byte
		if data, err = setupData(name, c); err == nil {
			err = os.WriteFile(p, data, 0o644)
		}
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

// TestReferenceBatteryOnEveryBackend replays the battery on every backend
// (package backendtest), with the setup steps every store can hold: files
// and directories under memories/, put in through the Store interface.
// Those that need a file system (symbolic links, FIFOs, sparse files) and
// those outside the store are left out, for every backend alike. Every
// answer, and the whole tree at each "tree" step, must be the file store's.
func TestReferenceBatteryOnEveryBackend(t *testing.T) {
	cases := readJSONL[map[string]json.RawMessage](t, "testdata/reference/cases.jsonl")
	all := backendtest.All()
	i := slices.IndexFunc(all, func(b backendtest.Backend) bool { return b.Name == "filestore" })
	if i < 0 {
		t.Fatal("backendtest has no filestore")
	}
	want := replayOnStore(t, cases, all[i].Open(t))
	for _, b := range all {
		t.Run(b.Name, func(t *testing.T) {
			got := replayOnStore(t, cases, b.Open(t))
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("line %d %s:\n got: %.600s\nwant: %.600s", i, cases[i]["_c"], got[i], want[i])
				}
			}
		})
	}
}

// replayOnStore runs the battery on s, returning for each line the answer
// as JSON, a snapshot of the tree at a "tree" step, or "" for another
// setup step.
func replayOnStore(t *testing.T, cases []map[string]json.RawMessage, s memtool.Store) []string {
	ctx := t.Context()
	mem := memtool.New(s, nil)
	out := make([]string, len(cases))
	for i, c := range cases {
		raw, setup := c["setup"]
		if !setup {
			res := mem.Run(ctx, toolInput(c))
			content, _ := json.Marshal(res.Content())
			out[i] = fmt.Sprintf("ok=%v %s", !res.IsError, content)
			continue
		}
		var op, name string
		json.Unmarshal(raw, &op)
		json.Unmarshal(c["path"], &name)
		name, inStore := strings.CutPrefix(name, "memories/")
		var err error
		switch {
		case op == "tree":
			out[i] = storeTree(t, s)
		case !inStore:
		case op == "mkdir":
			_, err = memtool.MkdirAll(ctx, s, name)
		case op == "rm":
			if err = memtool.RemoveAll(ctx, s, name); errors.Is(err, memtool.ErrNotExist) {
				err = nil
			}
		case op == "write" || op == "repeat":
			var data []byte
			if data, err = setupData(op, c); err == nil {
				err = writeFile(ctx, s, name, data)
			}
		}
		if err != nil {
			t.Fatalf("line %d: setup %s %s: %v", i, op, name, err)
		}
	}
	return out
}

// setupData is the content of a battery's write or repeat step.
func setupData(op string, c map[string]json.RawMessage) ([]byte, error) {
	str := func(k string) string {
		var s string
		json.Unmarshal(c[k], &s)
		return s
	}
	if op == "repeat" {
		var count int
		json.Unmarshal(c["count"], &count)
		return bytes.Repeat([]byte(str("unit")), count), nil
	}
	if b := str("b64"); b != "" {
		return base64.StdEncoding.DecodeString(b)
	}
	return []byte(str("text")), nil
}

// storeTree lists every entry of s, sorted: each directory, and each file
// with its content.
func storeTree(t *testing.T, s memtool.Store) string {
	var lines []string
	err := memtool.Walk(t.Context(), s, "", func(name string, fi memtool.FileInfo) error {
		if fi.IsDir() {
			lines = append(lines, name+"/")
			return nil
		}
		data, err := s.ReadFile(t.Context(), name, 16<<20)
		lines = append(lines, fmt.Sprintf("%s %q", name, data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
