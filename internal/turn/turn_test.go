package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
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

// heldStore holds the first WriteFile until release is closed, after
// telling entered; the write then lands whatever its context says.
type heldStore struct {
	memtool.Store
	once             sync.Once
	entered, release chan struct{}
}

func (s *heldStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	s.once.Do(func() {
		close(s.entered)
		<-s.release
	})
	return s.Store.WriteFile(context.WithoutCancel(ctx), name, data, mode)
}

// A line cancelled while a create runs answers the str_replace that waits
// for it as not run, and leaves the file as the create's answer says.
func TestCancelWhileWaiting(t *testing.T) {
	store := &heldStore{Store: memstore.New(), entered: make(chan struct{}), release: make(chan struct{})}
	x := &turn.Runner{Mem: memtool.New(store, nil), Timeout: time.Minute, Workers: 4}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan []byte, 1)
	go func() {
		out <- x.Line(ctx, []byte(`[{"command":"create","path":"/memories/x.md","file_text":"alpha"},`+
			`{"command":"str_replace","path":"/memories/x.md","old_str":"alpha","new_str":"beta"}]`))
	}()
	<-store.entered
	cancel()
	close(store.release)
	var got []answer
	if err := json.Unmarshal(<-out, &got); err != nil || len(got) != 2 {
		t.Fatalf("answers %v: %v", got, err)
	}
	var replaced string
	_ = json.Unmarshal(got[1].Content, &replaced)
	if want := "Error: The str_replace command was cancelled before it ran"; replaced != want {
		t.Errorf("str_replace: %q, want %q", replaced, want)
	}
	data, err := store.ReadFile(context.Background(), "x.md", 1<<20)
	if got[0].IsError != (err != nil) {
		t.Errorf("create answered %s, and reading the file: %q, %v", got[0].Content, data, err)
	}
	if err == nil && string(data) != "alpha" {
		t.Errorf("file holds %q, want alpha", data)
	}
}

// Follows orders calls whose paths differ only in case, as one entry: on
// a case-insensitive file system (macOS's default) a create in
// /memories/dir run at once with a delete of /memories/Dir could land
// before the delete and be deleted with it, both answered as done.
func TestFollowsFoldsCase(t *testing.T) {
	var inputs []json.RawMessage
	for _, in := range []string{
		`{"command":"delete","path":"/memories/Dir"}`,
		`{"command":"create","path":"/memories/dir/new.md","file_text":"x"}`,
		`{"command":"rename","old_path":"/memories/A.md","new_path":"/memories/b.md"}`,
		`{"command":"str_replace","path":"/memories/a.MD","old_str":"x","new_str":"y"}`,
		`{"command":"create","path":"/memories/other.md","file_text":"x"}`,
	} {
		inputs = append(inputs, json.RawMessage(in))
	}
	got := turn.Follows(t.Context(), nil, inputs)
	want := [][]int{nil, {0}, nil, {2}, nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Follows = %v, want %v", got, want)
	}
}

// Follows orders a call after the earlier ones whose paths overlap its
// own, but two views of one file may run at once: they change nothing.
func TestFollowsLetsViewsOverlap(t *testing.T) {
	var inputs []json.RawMessage
	for _, in := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"x"}`,
		`{"command":"view","path":"/memories/a.md"}`,
		`{"command":"view","path":"/memories"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"y"}`,
		`{"command":"view","path":"/memories/a.md"}`,
		`{"command":"view","path":"/memories/b.md"}`,
		`{"command":"rename","old_path":"/memories/b.md","new_path":"/memories/d/b.md"}`,
	} {
		inputs = append(inputs, json.RawMessage(in))
	}
	got := turn.Follows(t.Context(), nil, inputs)
	want := [][]int{nil, {0}, {0}, {0, 1, 2}, {0, 3}, nil, {2, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Follows = %v, want %v", got, want)
	}
}
