package claude_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
)

// logTool is a tool of WithTools that adds its label (its name when
// that is empty) to a shared log.
type logTool struct {
	name, label string
	mu          *sync.Mutex
	log         *[]string
}

func (l logTool) Name() string        { return l.name }
func (l logTool) Description() string { return "Logs its name." }
func (l logTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	return anthropic.BetaToolInputSchemaParam{Properties: map[string]any{}}
}

func (l logTool) Execute(context.Context, json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	label := l.label
	if label == "" {
		label = l.name
	}
	l.mu.Lock()
	*l.log = append(*l.log, label)
	l.mu.Unlock()
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: "ok from " + label}}}, nil
}

// The SDK runner lets its caller take a tool away (RemoveTools) or replace
// it (AddTools) at once, even for a call in the message it last returned;
// the runner then never passes that call to the tool of WithTools. The
// calls of the turn ordered after it must not wait for it: the step ends
// (RunToCompletion has no deadline of its own), and the later calls run,
// still in the model's order.
func TestRunnerRunsCallsAfterARemovedTool(t *testing.T) {
	for _, how := range []string{"RemoveTools", "AddTools"} {
		t.Run(how, func(t *testing.T) {
			srv := claudetest.NewServer(
				claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "first", Input: `{}`}, {Name: "second", Input: `{}`}, {Name: "third", Input: `{}`}}},
				claudetest.Turn{Text: "Done."},
			)
			defer srv.Close()
			client := srv.Client()
			var mu sync.Mutex
			var log []string
			tool := func(name string) logTool { return logTool{name, "", &mu, &log} }
			runner := claude.NewRunner(&client, newMemory(), userParams("hi"),
				claude.WithTools(tool("first"), tool("second"), tool("third")))
			// The deadline only ends a deadlock; it asserts nothing about speed.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := runner.NextMessage(ctx); err != nil {
				t.Fatal(err)
			}
			want := []string{"second", "third"}
			if how == "RemoveTools" {
				runner.RemoveTools(tool("first"))
			} else {
				runner.AddTools(logTool{"first", "new first", &mu, &log}) // a new version
				want = []string{"new first", "second", "third"}
			}
			if _, err := runner.RunToCompletion(ctx); ctx.Err() != nil {
				t.Fatalf("the step waited until its context ended (%v): a call waited for the call of the tool taken away", err)
			}
			mu.Lock()
			defer mu.Unlock()
			// The replacement is not ordered with the turn: it may run at any point.
			if !slices.Equal(log, want) && (how == "RemoveTools" || !sameSet(log, want) || slices.Index(log, "second") > slices.Index(log, "third")) {
				t.Errorf("the tools ran %q, want %q", log, want)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			var sent []string
			for _, m := range reqs[1].Messages {
				sent = append(sent, string(m))
			}
			for _, s := range []string{"ok from second", "ok from third"} {
				if !slices.ContainsFunc(sent, func(m string) bool { return strings.Contains(m, s) }) {
					t.Errorf("no tool result says %q: %s", s, sent)
				}
			}
		})
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
