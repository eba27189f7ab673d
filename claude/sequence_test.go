package claude_test

import (
	"context"
	"encoding/json"
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
