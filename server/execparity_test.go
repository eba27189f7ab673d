package server_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
)

// POST /v1/memory answers byte for byte the line memtool exec writes
// for the same body (exec runs each line with turn.Runner, as here), on
// good, malformed and hostile bodies alike: one object, a turn, trailing
// data, invalid UTF-8, surrounding space, the wrong JSON type.
func TestAnswersAsExecDoes(t *testing.T) {
	f := newFixture(t, nil)
	_, alice := f.key(t, "alice", keys.Write)
	exec := turn.Runner{Mem: memtool.New(memstore.New(), nil), Timeout: time.Minute, Workers: 4}
	for _, body := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"one\ntwo\n"}`,
		"\t " + `{"command":"view","path":"/memories/a.md"}` + " \r\n",
		`[{"command":"view","path":"/memories"},{"command":"str_replace","path":"/memories/a.md","old_str":"one","new_str":"1"},{"command":"view","path":"/memories/a.md"}]`,
		`{"command":"view","path":"/memories/a.md"} trailing`,
		`{"command":"view","path":"/memories/a.md"}{"command":"view","path":"/memories"}`,
		`[{"command":"view","path":"/memories"}] []`,
		`{"command":"view","path":"/memories/../../etc/passwd"}`,
		`{"command":"create","path":"/memories/b.md","file_text":"` + "\xff\xfe" + `"}`,
		`{"command":"nope","path":"/memories"}`,
		`{"command":"view","path":"/memories","command":"delete"}`,
		`{"Command":"view","path":"/memories"}`,
		`"view"`, `42`, `null`, `[]`, `[1,"x",null]`, `[`, `{`, `}`,
		`{"command":"view","path":"/memories/a.md","view_range":[1,99999999999999999999]}`,
		`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/c.md"}`,
		`{"command":"delete","path":"/memories"}`,
	} {
		got := f.do(t, "POST", "/v1/memory", alice, body)
		want := string(exec.Line(context.Background(), bytes.TrimSpace([]byte(body)))) + "\n"
		if got.status != 200 || got.body != want {
			t.Errorf("body %q:\nserver %d %q\nexec       %q", body, got.status, got.body, want)
		}
		if strings.Contains(got.body, "/etc/passwd") && !strings.Contains(got.body, `"is_error":true`) {
			t.Errorf("a traversal was served: %q", got.body)
		}
	}
}
