package claude_test

import (
	"encoding/json"
	"slices"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
)

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPrepareParamsPresets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []claude.Option
		wantEdits string
		wantBetas []anthropic.AnthropicBeta
	}{
		{
			name:      "clear tool uses, defaults",
			opts:      []claude.Option{claude.WithClearToolUses(claude.ClearToolUses{})},
			wantEdits: `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},"exclude_tools":["memory"]}]}`,
			wantBetas: []anthropic.AnthropicBeta{"context-management-2025-06-27"},
		},
		{
			name: "clear tool uses, everything set; memory excluded once",
			opts: []claude.Option{claude.WithClearToolUses(claude.ClearToolUses{
				Trigger: 50000, Keep: 5, ClearAtLeast: 10000, ClearInputs: true, ExcludeTools: []string{"web_search", "memory"},
			})},
			wantEdits: `{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":50000},"keep":{"type":"tool_uses","value":5},
				"clear_at_least":{"type":"input_tokens","value":10000},"clear_tool_inputs":true,"exclude_tools":["memory","web_search"]}]}`,
			wantBetas: []anthropic.AnthropicBeta{"context-management-2025-06-27"},
		},
		{
			name:      "clear thinking",
			opts:      []claude.Option{claude.WithClearThinking(2), claude.WithClearThinking(-1)},
			wantEdits: `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},{"type":"clear_thinking_20251015","keep":{"type":"all"}}]}`,
			wantBetas: []anthropic.AnthropicBeta{"context-management-2025-06-27"},
		},
		{
			name:      "clear thinking listed first, whatever the options' order",
			opts:      []claude.Option{claude.WithClearToolUses(claude.ClearToolUses{}), claude.WithClearThinking(1)},
			wantEdits: `{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":1}},{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},"exclude_tools":["memory"]}]}`,
			wantBetas: []anthropic.AnthropicBeta{"context-management-2025-06-27"},
		},
		{
			name:      "compaction",
			opts:      []claude.Option{claude.WithCompaction(claude.Compaction{PauseAfter: true})},
			wantEdits: `{"edits":[{"type":"compact_20260112","trigger":{"type":"input_tokens","value":150000},"pause_after_compaction":true}]}`,
			wantBetas: []anthropic.AnthropicBeta{"compact-2026-01-12"},
		},
		{
			name:      "on-demand compaction",
			opts:      []claude.Option{claude.WithCompactBeforeNextTurn()},
			wantEdits: `{}`,
			wantBetas: []anthropic.AnthropicBeta{"compact-2026-09-04"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := claude.PrepareParams(anthropic.BetaMessageNewParams{}, tc.opts...)
			if got := marshal(t, p.ContextManagement); !claudetest.JSONEqual(t, got, tc.wantEdits) {
				t.Errorf("context_management %s\nwant %s", got, tc.wantEdits)
			}
			if !slices.Equal(p.Betas, tc.wantBetas) {
				t.Errorf("betas %q, want %q", p.Betas, tc.wantBetas)
			}
			if got := marshal(t, p.Tools); !claudetest.JSONEqual(t, got, `[{"name":"memory","type":"memory_20250818"}]`) {
				t.Errorf("tools %s", got)
			}
		})
	}
}

func TestPrepareParamsKeepsWhatIsThere(t *testing.T) {
	in := anthropic.BetaMessageNewParams{
		Tools:  []anthropic.BetaToolUnionParam{claude.BetaToolParam()},
		Betas:  []anthropic.AnthropicBeta{anthropic.AnthropicBetaContextManagement2025_06_27},
		System: []anthropic.BetaTextBlockParam{{Text: "Be brief."}},
		ContextManagement: anthropic.BetaContextManagementConfigParam{Edits: []anthropic.BetaContextManagementConfigEditUnionParam{
			{OfCompact20260112: &anthropic.BetaCompact20260112EditParam{}},
		}},
		Compaction: anthropic.BetaCompactionConfigUnionParam{OfSummarize: &anthropic.BetaSummarizeCompactionParam{}},
	}
	before := string(marshal(t, in))
	p := claude.PrepareParams(in, claude.WithClearToolUses(claude.ClearToolUses{}), claude.WithTopic("cooking"))
	if after := string(marshal(t, in)); after != before {
		t.Errorf("PrepareParams changed its argument:\n%s\n%s", before, after)
	}
	if len(p.Tools) != 1 {
		t.Errorf("memory declared again: %s", marshal(t, p.Tools))
	}
	wantBetas := []anthropic.AnthropicBeta{"context-management-2025-06-27", "compact-2026-01-12", "compact-2026-09-04"}
	if !slices.Equal(p.Betas, wantBetas) {
		t.Errorf("betas %q, want %q", p.Betas, wantBetas)
	}
	if got := marshal(t, p.System); !claudetest.JSONEqual(t, got, `[{"type":"text","text":"Be brief."},{"type":"text","text":"Only write down information relevant to cooking in your memory system."}]`) {
		t.Errorf("system %s", got)
	}
	if n := len(p.ContextManagement.Edits); n != 2 || p.ContextManagement.Edits[0].OfCompact20260112 == nil {
		t.Errorf("edits %s", marshal(t, p.ContextManagement))
	}
}

func TestToolParams(t *testing.T) {
	if got := marshal(t, claude.BetaToolParam()); !claudetest.JSONEqual(t, got, `{"name":"memory","type":"memory_20250818"}`) {
		t.Errorf("beta %s", got)
	}
	if got := marshal(t, claude.ToolParam()); !claudetest.JSONEqual(t, got, `{"name":"memory","type":"memory_20250818"}`) {
		t.Errorf("GA %s", got)
	}
}

func TestCallSummary(t *testing.T) {
	for _, tc := range []struct {
		call claude.Call
		want string
	}{
		{claude.Call{Command: &memtool.View{Path: "/memories"}, Result: memtool.Result{Text: "Here're…"}}, "view /memories: ok"},
		{claude.Call{Command: &memtool.Rename{OldPath: "/memories/a", NewPath: "/memories/b"}, Result: memtool.Result{Text: "ok"}}, "rename /memories/a -> /memories/b: ok"},
		{claude.Call{Result: memtool.Result{Text: "Error: Unknown command: x", IsError: true}}, "invalid input: error: Unknown command: x"},
		{claude.Call{Command: &memtool.View{Path: "/memories/p.png"}, Result: memtool.Result{Image: &memtool.Image{MediaType: "image/png", Data: make([]byte, 7)}}}, "view /memories/p.png: image/png image, 7 bytes"},
		// Terminal escapes from the model are quoted or replaced.
		{claude.Call{Command: &memtool.Create{Path: "/memories/\x1b[31mred"}, Result: memtool.Result{Text: "Error: Path \"/memories/\\x1b[31mred\" contains a control character", IsError: true}},
			`create "/memories/\x1b[31mred": error: Path "/memories/\x1b[31mred" contains a control character`},
		{claude.Call{Command: &memtool.StrReplace{Path: "/memories/a"}, Result: memtool.Result{Text: "Error: No replacement was performed, old_str `a\x07\nb` did not appear", IsError: true}},
			"str_replace /memories/a: error: No replacement was performed, old_str `a?…"},
	} {
		if got := tc.call.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}
