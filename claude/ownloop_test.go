package claude_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/memstore"
)

// ownLoopScript depends on the order of the calls of its second turn: they
// all touch one file, so they must run as written.
func ownLoopScript() []claudetest.Turn {
	return []claudetest.Turn{
		{Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}},
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"create","path":"/memories/todo.md","file_text":"- write tests\n"}`},
			{Input: `{"command":"str_replace","path":"/memories/todo.md","old_str":"- write tests","new_str":"- [x] write tests"}`},
			{Input: `{"command":"insert","path":"/memories/todo.md","insert_line":1,"insert_text":"- [ ] ship"}`},
			{Input: `{"command":"view","path":"/memories/todo.md"}`},
		}},
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"create","path":"/memories/todo.md","file_text":"again"}`},
			{Input: `{"command":"view","path":"/memories/pic.png"}`},
			{Name: "other_tool", Input: `{}`},
		}},
		{Text: "All done."},
	}
}

// ownLoopWant is what each request's last message must carry.
func ownLoopWant(pic []byte) map[int][]string {
	return map[int][]string{
		1: {textResult("toolu_01_1", fmt.Sprintf("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n%dB\t/memories/pic.png", len(pic)))},
		2: {
			textResult("toolu_02_1", "File created successfully at: /memories/todo.md"),
			textResult("toolu_02_2", "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t- [x] write tests\n     2\t"),
			textResult("toolu_02_3", "The file /memories/todo.md has been edited."),
			textResult("toolu_02_4", "Here's the content of /memories/todo.md with line numbers:\n     1\t- [x] write tests\n     2\t- [ ] ship\n     3\t"),
		},
		3: {
			errorResult("toolu_03_1", "Error: File /memories/todo.md already exists"),
			imageResult("toolu_03_2", "image/png", base64.StdEncoding.EncodeToString(pic)),
			`{"type":"tool_result","tool_use_id":"toolu_03_3","is_error":false,"content":[{"type":"text","text":"other tool ran"}]}`,
		},
	}
}

func checkOwnLoop(t *testing.T, srv *claudetest.Server, pic []byte, wantBeta, wantTools string) {
	t.Helper()
	noProblems(t, srv)
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, wantResults := range ownLoopWant(pic) {
		got := reqs[i].ToolResults()
		if len(got) != len(wantResults) {
			t.Errorf("request %d: %d tool results, want %d", i+1, len(got), len(wantResults))
			continue
		}
		for k, w := range wantResults {
			if !sameJSON(t, got[k].Raw, w) {
				t.Errorf("request %d, result %d:\n got %s\nwant %s", i+1, k+1, got[k].Raw, w)
			}
		}
	}
	for i, r := range reqs {
		if got := r.Header.Get("Anthropic-Beta"); got != wantBeta {
			t.Errorf("request %d: anthropic-beta %q, want %q", i+1, got, wantBeta)
		}
		if !sameJSON(t, r.Tools, wantTools) {
			t.Errorf("request %d: tools %s", i+1, r.Tools)
		}
	}
}

func TestOwnLoopBeta(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx := context.Background()
			mem, store := newFileMemory(t)
			pic := pngBytes(t)
			if err := store.WriteFile(ctx, "pic.png", pic, memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			srv := claudetest.NewServer(ownLoopScript()...)
			defer srv.Close()
			client := srv.Client()
			tool := claude.NewTool(mem, nil)

			params := claude.PrepareParams(anthropic.BetaMessageNewParams{
				Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
				Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Plan the release."))},
				Tools: []anthropic.BetaToolUnionParam{{OfTool: &anthropic.BetaToolParam{
					Name: "other_tool", InputSchema: anthropic.BetaToolInputSchemaParam{Properties: map[string]any{}},
				}}},
			}, claude.WithClearToolUses(claude.ClearToolUses{}))
			for range 10 {
				var msg *anthropic.BetaMessage
				if streaming {
					stream := client.Beta.Messages.NewStreaming(ctx, params)
					msg = &anthropic.BetaMessage{}
					for stream.Next() {
						if err := msg.Accumulate(stream.Current()); err != nil {
							t.Fatal(err)
						}
					}
					if err := stream.Err(); err != nil {
						noProblems(t, srv)
						t.Fatal(err)
					}
				} else {
					var err error
					if msg, err = client.Beta.Messages.New(ctx, params); err != nil {
						noProblems(t, srv)
						t.Fatal(err)
					}
				}
				if msg.StopReason != anthropic.BetaStopReasonToolUse {
					if got := claude.Text(msg); got != "All done." {
						t.Errorf("final text %q", got)
					}
					break
				}
				results := tool.BetaToolResults(ctx, msg)
				for _, block := range msg.Content { // the application's own tool
					if block.Type == "tool_use" && block.Name == "other_tool" {
						results = append(results, anthropic.NewBetaToolResultBlock(block.ID, "other tool ran", false))
					}
				}
				params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewBetaUserMessage(results...))
			}
			// PrepareParams declares memory after the application's tools.
			checkOwnLoop(t, srv, pic, "context-management-2025-06-27",
				`[{"name":"other_tool","input_schema":{"type":"object","properties":{}}},{"name":"memory","type":"memory_20250818"}]`)
			for i, r := range srv.Requests() {
				if !sameJSON(t, r.ContextManagement, `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},"exclude_tools":["memory"]}]}`) {
					t.Errorf("request %d: context_management %s", i+1, r.ContextManagement)
				}
			}
		})
	}
}

func TestOwnLoopGA(t *testing.T) {
	ctx := context.Background()
	mem, store := newFileMemory(t)
	pic := pngBytes(t)
	if err := store.WriteFile(ctx, "pic.png", pic, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	srv := claudetest.NewServer(ownLoopScript()...)
	defer srv.Close()
	client := srv.Client()
	tool := claude.NewTool(mem, nil)

	params := anthropic.MessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Plan the release."))},
		Tools: []anthropic.ToolUnionParam{claude.ToolParam(), {OfTool: &anthropic.ToolParam{
			Name: "other_tool", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
		}}},
	}
	for range 10 {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			noProblems(t, srv)
			t.Fatal(err)
		}
		if msg.StopReason != anthropic.StopReasonToolUse {
			break
		}
		results := tool.ToolResults(ctx, msg)
		for _, block := range msg.Content {
			if block.Type == "tool_use" && block.Name == "other_tool" {
				results = append(results, anthropic.NewToolResultBlock(block.ID, "other tool ran", false))
			}
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
	}
	checkOwnLoop(t, srv, pic, "",
		`[{"name":"memory","type":"memory_20250818"},{"name":"other_tool","input_schema":{"type":"object","properties":{}}}]`)
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
		tool := claude.NewTool(memtool.New(memstore.New(), nil), nil)
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

// Tool.Execute, as the SDK runner calls it, reports failures as a
// *CommandError that the runner turns back into memtool's exact text.
func TestExecute(t *testing.T) {
	tool := claude.NewTool(memtool.New(memstore.New(), nil), nil)
	ctx := context.Background()
	content, err := tool.Execute(ctx, json.RawMessage(`{"command":"create","path":"/memories/a","file_text":"hi"}`))
	if err != nil || len(content) != 1 || content[0].OfText.Text != "File created successfully at: /memories/a" {
		t.Fatalf("create: %v %+v", err, content)
	}
	_, err = tool.Execute(ctx, json.RawMessage(`{"command":"nope"}`))
	var ce *claude.CommandError
	if !errors.As(err, &ce) || !ce.Result.IsError {
		t.Fatalf("bad command: err %v", err)
	}
	if got := "Error: " + err.Error(); got != ce.Result.Text || got != "Error: Unknown command: nope" {
		t.Errorf("runner would send %q; memtool's text is %q", got, ce.Result.Text)
	}
}
