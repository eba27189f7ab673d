package claude_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/memstore"
)

// oneFileTurn is a turn whose calls must run as written: the file does not
// exist before the create, and the insert's line numbers assume the
// replacement.
var oneFileTurn = []claudetest.ToolUse{
	{Input: `{"command":"create","path":"/memories/x.md","file_text":"alpha\nbeta\n"}`},
	{Input: `{"command":"str_replace","path":"/memories/x.md","old_str":"beta","new_str":"BETA"}`},
	{Input: `{"command":"insert","path":"/memories/x.md","insert_line":1,"insert_text":"between"}`},
}

const oneFileWant = "alpha\nbetween\nBETA\n"

// runScript runs a conversation through NewRunner or NewStreamingRunner
// against a fake that answers with turns and then ends.
func runScript(t *testing.T, streaming bool, mem *memtool.Memory, opts []claude.Option, turns ...claudetest.Turn) *claudetest.Server {
	t.Helper()
	srv := claudetest.NewServer(append(turns, claudetest.Turn{Text: "Done."})...)
	t.Cleanup(srv.Close)
	client := srv.Client()
	params := anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Take notes."))},
	}}
	ctx := context.Background()
	if streaming {
		runner := claude.NewStreamingRunner(&client, mem, params, opts...)
		for events := range runner.AllStreaming(ctx) {
			for _, err := range events {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	} else {
		runner := claude.NewRunner(&client, mem, params, opts...)
		if _, err := runner.RunToCompletion(ctx); err != nil {
			t.Fatal(err)
		}
	}
	srv.CheckRefusals(t)
	return srv
}

// The SDK runner starts one goroutine per call; the calls of one turn on
// one file still run in the order the model wrote them, every time.
func TestRunnerKeepsOrderOnOneFile(t *testing.T) {
	runs := 200 // the bar; -short runs 20
	if testing.Short() {
		runs = 20
	}
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			inOrder := 0
			for range runs {
				store := memstore.New()
				srv := runScript(t, streaming, memtool.New(store, nil), nil, claudetest.Turn{Calls: oneFileTurn})
				got, err := store.ReadFile(context.Background(), "x.md", 1<<20)
				results := srv.Requests()[1].ToolResults()
				ok := err == nil && string(got) == oneFileWant && len(results) == 3
				for _, r := range results {
					ok = ok && !r.IsError
				}
				if ok {
					inOrder++
				}
			}
			if inOrder != runs {
				t.Errorf("%d of %d runs ran the turn in order", inOrder, runs)
			}
		})
	}
}

// appendTool is a tool of WithTools that appends its input's text to a
// log, the first call of a turn slowly: run concurrently, the later calls
// would land first.
type appendTool struct {
	mu    sync.Mutex
	log   []string
	calls int
}

func (a *appendTool) Name() string        { return "append" }
func (a *appendTool) Description() string { return "Appends text to the log." }
func (a *appendTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	return anthropic.BetaToolInputSchemaParam{Properties: map[string]any{"text": map[string]any{"type": "string"}}}
}

func (a *appendTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.calls++
	first := a.calls%3 == 1
	a.mu.Unlock()
	if first {
		time.Sleep(20 * time.Millisecond)
	}
	a.mu.Lock()
	a.log = append(a.log, in.Text)
	a.mu.Unlock()
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: "ok"}}}, nil
}

// The calls of one turn to the tools of WithTools run in the order the
// model wrote them, on both runners, memory calls mixed in.
func TestRunnerKeepsOrderOfOtherTools(t *testing.T) {
	runs := 20
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			inOrder := 0
			for range runs {
				tool := &appendTool{}
				turn := claudetest.Turn{Calls: []claudetest.ToolUse{
					{Name: "append", Input: `{"text":"a"}`},
					{Input: `{"command":"create","path":"/memories/x.md","file_text":"x"}`},
					{Name: "append", Input: `{"text":"b"}`},
					{Name: "append", Input: `{"text":"c"}`},
				}}
				runScript(t, streaming, memtool.New(memstore.New(), nil), []claude.Option{claude.WithTools(tool)}, turn)
				if slices.Equal(tool.log, []string{"a", "b", "c"}) {
					inOrder++
				}
			}
			if inOrder != runs {
				t.Errorf("%d of %d runs ran the other tools' calls in order", inOrder, runs)
			}
		})
	}
}

// overlapStore records when writes start and end, and holds the first
// writes until a write of a.md and a write of b.md have both started, or
// until a bound passes (so that a serializing runner ends the test
// instead of hanging it; the record then shows no overlap).
type overlapStore struct {
	memtool.Store
	mu     sync.Mutex
	events []string
	seen   map[string]bool
	both   chan struct{}
}

func newOverlapStore() *overlapStore {
	return &overlapStore{Store: memstore.New(), seen: map[string]bool{}, both: make(chan struct{})}
}

func (s *overlapStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	s.mu.Lock()
	s.events = append(s.events, "enter "+name)
	if s.seen[name] = true; s.seen["a.md"] && s.seen["b.md"] && len(s.seen) == 2 {
		s.seen["done"] = true
		close(s.both)
	}
	s.mu.Unlock()
	select {
	case <-s.both:
	case <-time.After(10 * time.Second):
	}
	err := s.Store.WriteFile(ctx, name, data, mode)
	s.mu.Lock()
	s.events = append(s.events, "exit "+name)
	s.mu.Unlock()
	return err
}

// A turn on two files keeps each file's calls in order, and the calls on
// the two files still run at the same time: the record of the store shows
// a write of each file started before the first write ended.
func TestRunnerOverlapsUnrelatedCalls(t *testing.T) {
	runs := 200 // the bar; -short runs 20
	if testing.Short() {
		runs = 20
	}
	turn := []claudetest.ToolUse{
		{Input: `{"command":"create","path":"/memories/a.md","file_text":"a1\n"}`},
		{Input: `{"command":"create","path":"/memories/b.md","file_text":"b1\n"}`},
		{Input: `{"command":"str_replace","path":"/memories/a.md","old_str":"a1","new_str":"A1"}`},
		{Input: `{"command":"insert","path":"/memories/b.md","insert_line":1,"insert_text":"b2"}`},
		{Input: `{"command":"insert","path":"/memories/a.md","insert_line":1,"insert_text":"a2"}`},
		{Input: `{"command":"str_replace","path":"/memories/b.md","old_str":"b1","new_str":"B1"}`},
	}
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			inOrder, overlapped := 0, 0
			for range runs {
				store := newOverlapStore()
				runScript(t, streaming, memtool.New(store, nil), nil, claudetest.Turn{Calls: turn})
				a, errA := store.ReadFile(context.Background(), "a.md", 1<<20)
				b, errB := store.ReadFile(context.Background(), "b.md", 1<<20)
				if errA == nil && errB == nil && string(a) == "A1\na2\n" && string(b) == "B1\nb2\n" {
					inOrder++
				}
				store.mu.Lock()
				firstExit := slices.IndexFunc(store.events, func(e string) bool { return e[:4] == "exit" })
				before := store.events[:max(firstExit, 0)]
				if slices.Contains(before, "enter a.md") && slices.Contains(before, "enter b.md") {
					overlapped++
				}
				store.mu.Unlock()
			}
			if inOrder != runs || overlapped != runs {
				t.Errorf("of %d runs: %d kept each file's order, %d ran the two files' calls at once", runs, inOrder, overlapped)
			}
		})
	}
}

// gatedStore holds every WriteFile until two writes are in progress at
// once, so it deadlocks (until ctx ends) if writes run one at a time.
type gatedStore struct {
	memtool.Store
	mu   sync.Mutex
	n    int
	both chan struct{}
}

func (s *gatedStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	s.mu.Lock()
	if s.n++; s.n == 2 {
		close(s.both)
	}
	s.mu.Unlock()
	select {
	case <-s.both:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Store.WriteFile(ctx, name, data, mode)
}

func betaMessage(t *testing.T, inputs ...string) *anthropic.BetaMessage {
	t.Helper()
	var content []map[string]any
	for i, in := range inputs {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i+1), "name": "memory", "input": json.RawMessage(in)})
	}
	data, _ := json.Marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "content": content, "stop_reason": "tool_use"})
	var msg anthropic.BetaMessage
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatal(err)
	}
	return &msg
}

// Calls on unrelated paths run at the same time.
func TestToolResultsRunsIndependentCallsConcurrently(t *testing.T) {
	// The deadline only ends a deadlock; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := &gatedStore{Store: memstore.New(), both: make(chan struct{})}
	tool := claude.NewTool(memtool.New(store, nil), nil)
	results := tool.BetaToolResults(ctx, betaMessage(t,
		`{"command":"create","path":"/memories/a.md","file_text":"a"}`,
		`{"command":"create","path":"/memories/b.md","file_text":"b"}`,
	))
	for i, r := range results {
		if r.OfToolResult.IsError.Value {
			t.Errorf("result %d failed: %v", i+1, r.OfToolResult.Content[0].OfText.Text)
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("the two creates did not run concurrently")
	}
}

// Calls on one path run in the order the model wrote them, every time.
func TestToolResultsKeepsOrderOnOnePath(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	for range rounds {
		tool := claude.NewTool(newMemory(), nil)
		msg := betaMessage(t,
			`{"command":"create","path":"/memories/other.md","file_text":"x"}`,
			`{"command":"create","path":"/memories/d/f.md","file_text":"one\n"}`,
			`{"command":"view","path":"/memories"}`,
			`{"command":"str_replace","path":"/memories/d/f.md","old_str":"one","new_str":"two"}`,
			`{"command":"insert","path":"/memories/d/f.md","insert_line":0,"insert_text":"zero"}`,
			`{"command":"rename","old_path":"/memories/d","new_path":"/memories/e"}`,
			`{"command":"view","path":"/memories/e/f.md"}`,
		)
		results := tool.BetaToolResults(context.Background(), msg)
		if len(results) != 7 {
			t.Fatalf("%d results, want 7", len(results))
		}
		for i, r := range results {
			tr := r.OfToolResult
			if tr.ToolUseID != fmt.Sprintf("toolu_%d", i+1) {
				t.Fatalf("result %d answers %s", i+1, tr.ToolUseID)
			}
			if tr.IsError.Value {
				t.Fatalf("result %d failed: %s", i+1, tr.Content[0].OfText.Text)
			}
		}
		want := "Here's the content of /memories/e/f.md with line numbers:\n     1\tzero\n     2\ttwo\n     3\t"
		if got := results[6].OfToolResult.Content[0].OfText.Text; got != want {
			t.Fatalf("last view = %q, want %q", got, want)
		}
	}
}

// A Tool that follows a turn (ToolOptions.Turn), as a runner built by hand
// would use it: the later call arrives first and still runs second, and
// OnCall gets each call's tool_use id.
func TestExecuteFollowsTurn(t *testing.T) {
	create := `{"command":"create","path":"/memories/x.md","file_text":"one\n"}`
	replace := `{"command":"str_replace","path":"/memories/x.md","old_str":"one","new_str":"two"}`
	msg := betaMessage(t, create, replace)
	var mu sync.Mutex
	ids := map[string]string{}
	tool := claude.NewTool(newMemory(), &claude.ToolOptions{
		Turn: func() *anthropic.BetaMessage { return msg },
		OnCall: func(_ context.Context, c claude.Call) {
			mu.Lock()
			ids[c.Command.Name()] = c.ID
			mu.Unlock()
		},
	})
	// The deadline only ends a deadlock; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	replaced := make(chan error, 1)
	go func() {
		_, err := tool.Execute(ctx, json.RawMessage(replace))
		replaced <- err
	}()
	if _, err := tool.Execute(ctx, json.RawMessage(create)); err != nil {
		t.Fatal(err)
	}
	if err := <-replaced; err != nil {
		t.Errorf("str_replace: %v", err)
	}
	if ids["create"] != "toolu_1" || ids["str_replace"] != "toolu_2" {
		t.Errorf("ids %v", ids)
	}
}

// A waiting call is released by a call that is not in the turn, and by
// the end of its context; neither hangs.
func TestExecuteWaitEnds(t *testing.T) {
	create := `{"command":"create","path":"/memories/x.md","file_text":"one\n"}`
	replace := `{"command":"str_replace","path":"/memories/x.md","old_str":"one","new_str":"two"}`
	msg := betaMessage(t, create, replace)
	tool := claude.NewTool(newMemory(), &claude.ToolOptions{Turn: func() *anthropic.BetaMessage { return msg }})
	// The deadline only ends a deadlock; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waiting := make(chan error, 1)
	go func() {
		_, err := tool.Execute(ctx, json.RawMessage(replace)) // waits for the create, which never comes
		waiting <- err
	}()
	if _, err := tool.Execute(ctx, json.RawMessage(`{"command":"view","path":"/memories"}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-waiting; err == nil {
		t.Error("str_replace on a missing file succeeded")
	}
	if ctx.Err() != nil {
		t.Fatal("an unknown call did not release the waiting one")
	}

	msg2 := betaMessage(t, create, replace)
	tool2 := claude.NewTool(newMemory(), &claude.ToolOptions{Turn: func() *anthropic.BetaMessage { return msg2 }})
	short, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tool2.Execute(short, json.RawMessage(replace))
		done <- err
	}()
	stop()
	err := <-done
	if err == nil || err.Error() != "The str_replace command was cancelled before it ran" {
		t.Errorf("cancelled wait: %v", err)
	}
}

// A call whose input repeats a key is run by the SDK runner with the value
// it decodes (the first), and the runner's turn must see that call as the
// runner runs it: on x.md, so the edits of x.md after it wait for it, and
// with its tool_use id known.
func TestRunnerKeepsOrderWithDuplicateKeys(t *testing.T) {
	runs := 50
	if testing.Short() {
		runs = 10
	}
	turn := claudetest.Turn{Calls: []claudetest.ToolUse{
		{Input: `{"command":"create","path":"/memories/x.md","path":"/memories/other.md","file_text":"alpha\nbeta\n"}`},
		{Input: `{"command":"str_replace","path":"/memories/x.md","old_str":"beta","new_str":"BETA"}`},
		{Input: `{"command":"insert","path":"/memories/x.md","insert_line":1,"insert_text":"between"}`},
	}}
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			inOrder := 0
			var noID []string
			for range runs {
				store := memstore.New()
				var mu sync.Mutex
				onCall := claude.WithOnCall(func(_ context.Context, c claude.Call) {
					if c.ID == "" {
						mu.Lock()
						noID = append(noID, string(c.Input))
						mu.Unlock()
					}
				})
				runScript(t, streaming, memtool.New(store, nil), []claude.Option{onCall}, turn)
				if got, err := store.ReadFile(context.Background(), "x.md", 1<<20); err == nil && string(got) == oneFileWant {
					inOrder++
				}
			}
			if inOrder != runs {
				t.Errorf("%d of %d runs ran the turn in order", inOrder, runs)
			}
			if len(noID) > 0 {
				t.Errorf("%d calls had no tool_use id, the first: %s", len(noID), noID[0])
			}
		})
	}
}
