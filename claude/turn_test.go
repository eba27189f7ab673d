package claude_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/memstore"
)

// A Tool that follows a turn (ToolOptions.Turn), as a runner built by hand
// would use it: the later call arrives first and still runs second, and
// OnCall gets each call's tool_use id.
func TestExecuteFollowsTurn(t *testing.T) {
	create := `{"command":"create","path":"/memories/x.md","file_text":"one\n"}`
	replace := `{"command":"str_replace","path":"/memories/x.md","old_str":"one","new_str":"two"}`
	msg := betaMessage(t, create, replace)
	var mu sync.Mutex
	ids := map[string]string{}
	tool := claude.NewTool(memtool.New(memstore.New(), nil), &claude.ToolOptions{
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
	tool := claude.NewTool(memtool.New(memstore.New(), nil), &claude.ToolOptions{Turn: func() *anthropic.BetaMessage { return msg }})
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
	tool2 := claude.NewTool(memtool.New(memstore.New(), nil), &claude.ToolOptions{Turn: func() *anthropic.BetaMessage { return msg2 }})
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
