package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/turn"
	"github.com/memtool/memtool/memstore"
)

type answer struct {
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

func runLine(t *testing.T, x *turn.Runner, line string) []answer {
	t.Helper()
	var got []answer
	out := x.Line(context.Background(), []byte(line))
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	return got
}

// TestDependentCallsRunInOrder checks that calls of one line that touch
// the same file run in the order they were written, as they would one
// after another: a create and then edits of that file, and a rename and
// then a view of its new name, all succeed in every round.
func TestDependentCallsRunInOrder(t *testing.T) {
	x := &turn.Runner{Mem: memtool.New(memstore.New(), nil), Timeout: time.Minute, Workers: 8}
	for round := range 50 {
		line := fmt.Sprintf(`[{"command":"create","path":"/memories/r%[1]d/a.md","file_text":"one\n"},`+
			`{"command":"str_replace","path":"/memories/r%[1]d/a.md","old_str":"one","new_str":"two"},`+
			`{"command":"insert","path":"/memories/r%[1]d/a.md","insert_line":1,"insert_text":"three"},`+
			`{"command":"rename","old_path":"/memories/r%[1]d","new_path":"/memories/s%[1]d"},`+
			`{"command":"view","path":"/memories/s%[1]d/a.md"},`+
			`{"command":"delete","path":"/memories/s%[1]d"}]`, round)
		got := runLine(t, x, line)
		if len(got) != 6 {
			t.Fatalf("round %d: %d answers, want 6", round, len(got))
		}
		for i, a := range got {
			if a.IsError {
				t.Fatalf("round %d: call %d failed: %s", round, i+1, a.Content)
			}
		}
		var view string
		_ = json.Unmarshal(got[4].Content, &view)
		if want := fmt.Sprintf("Here's the content of /memories/s%d/a.md with line numbers:\n     1\ttwo\n     2\tthree\n     3\t", round); view != want {
			t.Fatalf("round %d: view = %q, want %q", round, view, want)
		}
	}
}
