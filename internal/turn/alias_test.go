package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/sqlitestore"
)

// aliases are ways to write a few names: the same entry with a trailing
// slash, "." and ".." segments, directories and entries inside them.
var aliases = []string{
	"/memories/a", "/memories/a/", "/memories/./a", "/memories/b/../a", "/memories//a",
	"/memories/a/x.md", "/memories/a/./x.md", "/memories/b/../a/x.md", "/memories/a//x.md",
	"/memories/a/d/y.md", "/memories/./a/d/y.md",
	"/memories/b", "/memories/b/", "/memories/a/../b",
	"/memories/b/x.md", "/memories/./b/x.md",
	"/memories/x.md", "/memories/a/../x.md",
	"/memories", "/memories/", "/memories/.",
}

// randomCall returns a tool input on paths drawn from aliases.
func randomCall(r *rand.Rand) string {
	p := func() string { return aliases[r.IntN(len(aliases))] }
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	switch r.IntN(9) {
	case 0, 1:
		return fmt.Sprintf(`{"command":"create","path":%s,"file_text":"one\ntwo\n"}`, q(p()))
	case 2:
		return fmt.Sprintf(`{"command":"str_replace","path":%s,"old_str":"one","new_str":"one!"}`, q(p()))
	case 3:
		return fmt.Sprintf(`{"command":"insert","path":%s,"insert_line":0,"insert_text":"zero"}`, q(p()))
	case 4:
		return fmt.Sprintf(`{"command":"delete","path":%s}`, q(p()))
	case 5:
		return fmt.Sprintf(`{"command":"rename","old_path":%s,"new_path":%s}`, q(p()), q(p()))
	case 6:
		return fmt.Sprintf(`{"command":"view","path":%s}`, q(p()))
	}
	// Malformed inputs, and paths the gate refuses: each is answered with
	// its error, in its place, and changes nothing.
	bad := []string{
		`5`, `null`, `"x"`, `[]`, `{}`, `{"command":"view"}`,
		fmt.Sprintf(`{"command":"create","path":%s}`, q(p())),
		fmt.Sprintf(`{"command":"create","path":%s,"file_text":7}`, q(p())),
		fmt.Sprintf(`{"command":"create","path":%s,"file_text":"a","file_text":"b"}`, q(p())),
		fmt.Sprintf(`{"command":"delete","Path":%s}`, q(p())),
		fmt.Sprintf(`{"command":"rename","old_path":%s}`, q(p())),
		fmt.Sprintf(`{"command":"rename","old_path":%s,"new_path":"/memories/../x"}`, q(p())),
		fmt.Sprintf(`{"command":"rename","old_path":"/memoriesX/a","new_path":%s}`, q(p())),
		fmt.Sprintf(`{"command":"insert","path":%s,"insert_line":1.5,"insert_text":"x"}`, q(p())),
		fmt.Sprintf(`{"command":"view","path":%s,"view_range":[1]}`, q(p())),
		`{"command":"delete","path":"/memories/a/../../a"}`,
	}
	return bad[r.IntN(len(bad))]
}

// TestTurnMeansCallsOneAfterAnother runs random turns whose paths alias
// each other (trailing slashes, "." and ".." segments, a directory and a
// file in it, a rename's two paths) on real stores, and checks that each
// call's answer is the one it gets when the calls run one at a time in
// the order written, on a second store of the same kind. Malformed
// inputs among them are answered in their places and change nothing.
func TestTurnMeansCallsOneAfterAnother(t *testing.T) {
	for kind, open := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			ctx := context.Background()
			for round := range 30 {
				// A subtest a round, so that its stores close with it.
				t.Run(fmt.Sprint(round), func(t *testing.T) {
					turnMem := memtool.New(open(t, t.TempDir()), nil)
					seqMem := memtool.New(open(t, t.TempDir()), nil)
					x := &turn.Runner{Mem: turnMem, Timeout: time.Minute, Workers: 8}
					for range 3 { // lines, one after another, on the same stores
						calls := make([]string, 4+r.IntN(8))
						for i := range calls {
							calls[i] = randomCall(r)
						}
						var got []json.RawMessage
						out := x.Line(ctx, []byte("["+strings.Join(calls, ",")+"]"))
						if err := json.Unmarshal(out, &got); err != nil || len(got) != len(calls) {
							t.Fatalf("answer %s (%v), want %d answers", out, err, len(calls))
						}
						for i, in := range calls {
							want, _ := json.Marshal(seqMem.Run(ctx, []byte(in)))
							if string(got[i]) != string(want) {
								t.Fatalf("call %d of\n%s\nanswered %s\none at a time: %s", i, strings.Join(calls, "\n"), got[i], want)
							}
						}
					}
				})
			}
		})
	}
}

// storeKinds open a real store of each kind: in a directory, or in a
// schema of the test PostgreSQL server (skipped without one).
var storeKinds = map[string]func(t *testing.T, dir string) memtool.Store{
	"filestore": func(t *testing.T, dir string) memtool.Store {
		s, err := filestore.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	},
	"sqlitestore": func(t *testing.T, dir string) memtool.Store {
		s, err := sqlitestore.Open(filepath.Join(dir, "m.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	},
	"pgstore": func(t *testing.T, dir string) memtool.Store {
		s, err := pgstore.Open(context.Background(), pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	},
}
