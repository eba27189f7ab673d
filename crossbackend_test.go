package memtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/server/resource"
	"github.com/memtool/memtool/storetest"
)

// TestBackendsAgreeOnRandomSequences runs random sequences of the six
// commands, over a small tree of names where they collide often, on every
// backend (and through a remote store to a server on memstore), and
// checks that each gives the model the same answer, step by step, as
// memstore does. The sequences are fixed by their seeds; a failure names
// the seed and the step.
func TestBackendsAgreeOnRandomSequences(t *testing.T) {
	seeds, steps := 40, 60
	if testing.Short() {
		seeds = 8
	}
	all := append(backends, namedBackend{"remote", openRemote})
	for seed := range seeds {
		seq := randomSequence(uint64(seed), steps)
		want := runSequence(t, memtool.New(memstore.New(), nil), seq)
		for _, b := range all {
			if b.name == "memstore" {
				continue
			}
			t.Run(fmt.Sprintf("%s/seed%d", b.name, seed), func(t *testing.T) {
				got := runSequence(t, memtool.New(b.open(t), nil), seq)
				for i := range seq {
					if got[i] != want[i] {
						t.Fatalf("step %d of seed %d: %s\n got %+v\nwant %+v (memstore)\nthe steps before:\n%s",
							i, seed, seq[i], got[i], want[i], strings.Join(seqLines(seq[:i]), "\n"))
					}
				}
			})
		}
	}
}

// openRemote is a remote store whose server keeps the memory in memstore.
func openRemote(t *testing.T) memtool.Store {
	inner := memstore.New()
	srv := httptest.NewServer(resource.New(func(*http.Request) (memtool.Store, bool, error) { return inner, true, nil }, nil))
	t.Cleanup(srv.Close)
	s, err := remotestore.Open(srv.URL, nil)
	return storetest.Opened(t, s, err)
}

func runSequence(t *testing.T, mem *memtool.Memory, seq [][]byte) []memtool.Result {
	t.Helper()
	out := make([]memtool.Result, len(seq))
	for i, in := range seq {
		out[i] = mem.Run(context.Background(), in)
	}
	return out
}

func seqLines(seq [][]byte) []string {
	out := make([]string, len(seq))
	for i, in := range seq {
		out[i] = string(in)
	}
	return out
}

// The names and texts random sequences draw from: few, so that commands
// meet the same files and directories, and odd, so that they meet edges
// (spaces, non-ASCII, trailing slashes, dots, lines without an end, a
// string found twice, tabs, carriage returns, long lines).
var (
	seqPaths = []string{
		"/memories", "/memories/", "/memories/a.md", "/memories/b.txt", "/memories/d", "/memories/d/",
		"/memories/d/a.md", "/memories/d/e", "/memories/d/e/f.md", "/memories/d e/ü.md", "/memories/.hidden",
		"/memories/d/.x", "/memories/a.md/x", "/memories/../memories/a.md", "/memories/./d", "/memories/d//a.md",
		"/memories/Ω", "/memories/node_modules/m.js", "/memories/z", "/memories/d/e/g",
	}
	seqTexts = []string{
		"", "one", "one\n", "one\ntwo\nthree\n", "two two\n", "a\tb\n", "crlf\r\nline\r\n", "no end",
		"ünïcode ✓\n", "x\n\n\ny\n", strings.Repeat("long line ", 50) + "\n", strings.Repeat("row\n", 30),
	}
	seqNeedles = []string{"one", "two", "two two", "\n", "ü", "x", "row\n", "", "absent", "b\n"}
)

// randomSequence returns n tool inputs drawn with seed.
func randomSequence(seed uint64, n int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0x6d656d746f6f6c))
	pick := func(list []string) string { return list[r.IntN(len(list))] }
	seq := make([][]byte, n)
	for i := range seq {
		var in map[string]any
		switch r.IntN(8) {
		case 0, 1:
			in = map[string]any{"command": "create", "path": pick(seqPaths), "file_text": pick(seqTexts)}
		case 2:
			in = map[string]any{"command": "view", "path": pick(seqPaths)}
			if r.IntN(3) == 0 {
				start := r.IntN(5) + 1
				in["view_range"] = []int{start, start + r.IntN(6) - 1}
			}
		case 3:
			in = map[string]any{"command": "str_replace", "path": pick(seqPaths), "old_str": pick(seqNeedles), "new_str": pick(seqTexts)}
		case 4:
			in = map[string]any{"command": "insert", "path": pick(seqPaths), "insert_line": r.IntN(6) - 1, "insert_text": pick(seqTexts)}
		case 5:
			in = map[string]any{"command": "delete", "path": pick(seqPaths)}
		case 6:
			in = map[string]any{"command": "rename", "old_path": pick(seqPaths), "new_path": pick(seqPaths)}
		default:
			in = map[string]any{"command": "view", "path": "/memories"}
		}
		b, err := json.Marshal(in)
		if err != nil {
			panic(err)
		}
		seq[i] = b
	}
	return seq
}
