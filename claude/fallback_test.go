package claude_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// fallbackMessage is a reply whose first attempt was refused: the calls
// before the "fallback" block belong to it, and only those after it are
// answered, as the SDK runner answers them.
func fallbackMessage(t *testing.T) *anthropic.BetaMessage {
	t.Helper()
	data := `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use","content":[
		{"type":"tool_use","id":"t1","name":"memory","input":{"command":"create","path":"/memories/x.md","file_text":"refused\n"}},
		{"type":"tool_use","id":"t2","name":"append","input":{"text":"refused"}},
		{"type":"fallback","from":{"model":"m"},"to":{"model":"n"},"trigger":{"type":"refusal"}},
		{"type":"tool_use","id":"t3","name":"memory","input":{"command":"create","path":"/memories/x.md","file_text":"kept\n"}},
		{"type":"tool_use","id":"t4","name":"append","input":{"text":"kept"}}]}`
	var msg anthropic.BetaMessage
	if err := json.Unmarshal([]byte(data), &msg); err != nil {
		t.Fatal(err)
	}
	return &msg
}

// BetaToolResults and RunTools answer only the calls after the last
// "fallback" block, as the SDK runner does.
func TestOwnLoopSkipsCallsBeforeFallback(t *testing.T) {
	ctx := context.Background()
	msg := fallbackMessage(t)
	store := memstore.New()
	results := claude.NewTool(memtool.New(store, nil), nil).BetaToolResults(ctx, msg)
	if len(results) != 1 || results[0].OfToolResult.ToolUseID != "t3" || results[0].OfToolResult.IsError.Value {
		t.Errorf("memory results %s, want one success for t3", marshal(t, results))
	}
	if got := storetest.ReadText(t, store, "x.md"); got != "kept\n" {
		t.Errorf("x.md = %q", got)
	}
	other := &appendTool{}
	results = claude.RunTools(ctx, msg, other)
	if len(results) != 1 || results[0].OfToolResult.ToolUseID != "t4" {
		t.Errorf("other results %s, want one for t4", marshal(t, results))
	}
	if !slices.Equal(other.log, []string{"kept"}) {
		t.Errorf("append ran with %q", other.log)
	}
}

// A runner's Tool (ToolOptions.Turn) lists the turn's calls as the runner
// does: a call after the "fallback" block does not wait for an earlier call
// on its path that the runner will never run.
func TestExecuteIgnoresCallsBeforeFallback(t *testing.T) {
	msg := fallbackMessage(t)
	store := memstore.New()
	var ids []string
	tool := claude.NewTool(memtool.New(store, nil), &claude.ToolOptions{
		Turn:   func() *anthropic.BetaMessage { return msg },
		OnCall: func(_ context.Context, c claude.Call) { ids = append(ids, c.ID) },
	})
	// The deadline only ends a hang; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := tool.Execute(ctx, json.RawMessage(`{"command":"create","path":"/memories/x.md","file_text":"kept\n"}`)); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Error("the call waited for a call before the fallback block")
	}
	if !slices.Equal(ids, []string{"t3"}) {
		t.Errorf("OnCall ids %q, want [t3]", ids)
	}
}
