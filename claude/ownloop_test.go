package claude_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
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
	srv.CheckRefusals(t)
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	checkResults(t, reqs, ownLoopWant(pic))
	for i, r := range reqs {
		if got := r.Header.Get("Anthropic-Beta"); got != wantBeta {
			t.Errorf("request %d: anthropic-beta %q, want %q", i+1, got, wantBeta)
		}
		if !claudetest.JSONEqual(t, r.Tools, wantTools) {
			t.Errorf("request %d: tools %s", i+1, r.Tools)
		}
	}
}

func TestOwnLoopBeta(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, ownLoopScript())
			tool := claude.NewTool(f.mem, nil)

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
					stream := f.client.Beta.Messages.NewStreaming(ctx, params)
					msg = &anthropic.BetaMessage{}
					for stream.Next() {
						if err := msg.Accumulate(stream.Current()); err != nil {
							t.Fatal(err)
						}
					}
					if err := stream.Err(); err != nil {
						f.srv.CheckRefusals(t)
						t.Fatal(err)
					}
				} else {
					var err error
					if msg, err = f.client.Beta.Messages.New(ctx, params); err != nil {
						f.srv.CheckRefusals(t)
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
			checkOwnLoop(t, f.srv, f.pic, "context-management-2025-06-27",
				`[{"name":"other_tool","input_schema":{"type":"object","properties":{}}},{"name":"memory","type":"memory_20250818"}]`)
			for i, r := range f.srv.Requests() {
				if !claudetest.JSONEqual(t, r.ContextManagement, `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},"exclude_tools":["memory"]}]}`) {
					t.Errorf("request %d: context_management %s", i+1, r.ContextManagement)
				}
			}
		})
	}
}

func TestOwnLoopGA(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ownLoopScript())
	tool := claude.NewTool(f.mem, nil)

	params := anthropic.MessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Plan the release."))},
		Tools: []anthropic.ToolUnionParam{claude.ToolParam(), {OfTool: &anthropic.ToolParam{
			Name: "other_tool", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}},
		}}},
	}
	for range 10 {
		msg, err := f.client.Messages.New(ctx, params)
		if err != nil {
			f.srv.CheckRefusals(t)
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
	checkOwnLoop(t, f.srv, f.pic, "",
		`[{"name":"memory","type":"memory_20250818"},{"name":"other_tool","input_schema":{"type":"object","properties":{}}}]`)
}
