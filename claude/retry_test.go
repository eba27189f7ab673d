package claude_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// When the request after a turn of memory calls fails and the SDK runner's
// step is run again, the runner runs the turn's calls again. The calls that
// already ran must not change the store a second time: the retried step
// answers them with what they answered, and the model is told the same.
func TestRunnerRetriedStepRunsMemoryOnce(t *testing.T) {
	calls := []claudetest.ToolUse{
		{Input: `{"command":"create","path":"/memories/x.md","file_text":"a\n"}`},
		{Input: `{"command":"insert","path":"/memories/x.md","insert_line":1,"insert_text":"b"}`},
	}
	fail := claudetest.Turn{Error: &claudetest.Error{Status: 500, Type: "api_error", Message: "overloaded"}}
	for _, tc := range []struct {
		name               string
		streaming, compact bool
	}{{"NextMessage", false, false}, {"NextStreaming", true, false}, {"compaction", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			store := memstore.New()
			srv := claudetest.NewServer(claudetest.Turn{Calls: calls}, fail, claudetest.Turn{Text: "Done."})
			defer srv.Close()
			client := srv.Client()
			var mu sync.Mutex
			ran := 0
			opts := []claude.Option{claude.WithOnCall(func(context.Context, claude.Call) {
				mu.Lock()
				ran++
				mu.Unlock()
			})}
			ctx := context.Background()
			var errs []error
			if tc.streaming {
				runner := claude.NewStreamingRunner(&client, memtool.New(store, nil), userParams("hi"), opts...)
				for range 3 {
					for _, err := range runner.NextStreaming(ctx) {
						if err != nil {
							errs = append(errs, err)
						}
					}
				}
			} else {
				runner := claude.NewRunner(&client, memtool.New(store, nil), userParams("hi"), opts...)
				for step := range 3 {
					if tc.compact && step == 1 {
						runner.CompactBeforeNextTurn(anthropic.BetaCompactionConfigUnionParam{})
					}
					if _, err := runner.NextMessage(ctx); err != nil {
						errs = append(errs, err)
					}
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 3 || len(errs) != 1 {
				t.Fatalf("%d requests, errors %v; want 3 requests, the second failed", len(reqs), errs)
			}
			// The retried step's request is one the API takes: each
			// tool_use answered once, right after it.
			srv.CheckRefusals(t)
			if got := storetest.ReadText(t, store, "x.md"); got != "a\nb\n" {
				t.Errorf("x.md = %q after the retried step, want %q", got, "a\nb\n")
			}
			if ran != 2 {
				t.Errorf("OnCall saw %d commands run, want 2", ran)
			}
			// Whatever the SDK sends on the retried step, each tool_use is
			// answered with what its call answered the first time.
			first := reqs[1].ToolResults()
			if len(first) != 2 || first[0].IsError || first[1].IsError {
				t.Fatalf("first results: %+v", first)
			}
			again := allToolResults(t, reqs[2].Messages)
			if len(again) != 2 {
				t.Errorf("the retried step sent %d tool results, want 2", len(again))
			}
			for _, raw := range again {
				var b struct {
					ID string `json:"tool_use_id"`
				}
				_ = json.Unmarshal(raw, &b)
				k := map[string]int{"toolu_01_1": 0, "toolu_01_2": 1}[b.ID]
				if !claudetest.JSONEqual(t, raw, string(first[k].Raw)) {
					t.Errorf("%s answered again with %s, first with %s", b.ID, raw, first[k].Raw)
				}
			}
		})
	}
}

// A turn followed by hand (ToolOptions.Turn) whose first pass was cancelled
// before the create ran: on the second pass the create runs first, and the
// str_replace that follows it, run again, must not wait for a create that
// has already run.
func TestExecuteSecondPassDoesNotHang(t *testing.T) {
	create := `{"command":"create","path":"/memories/x.md","file_text":"one\n"}`
	replace := `{"command":"str_replace","path":"/memories/x.md","old_str":"one","new_str":"two"}`
	msg := betaMessage(t, create, replace)
	store := memstore.New()
	tool := claude.NewTool(memtool.New(store, nil), &claude.ToolOptions{Turn: func() *anthropic.BetaMessage { return msg }})

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool.Execute(cancelled, json.RawMessage(replace)); err == nil {
		t.Fatal("str_replace ran with a cancelled context")
	}
	// The deadline only ends a hang; it asserts nothing about speed.
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if _, err := tool.Execute(ctx, json.RawMessage(create)); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Execute(ctx, json.RawMessage(replace)); err != nil {
		t.Errorf("str_replace on the second pass: %v", err)
	}
	if ctx.Err() != nil {
		t.Error("str_replace waited for a call that had already run")
	}
	if got := storetest.ReadText(t, store, "x.md"); got != "two\n" {
		t.Errorf("x.md = %q", got)
	}
}

// allToolResults returns every tool_result block of a conversation.
func allToolResults(t *testing.T, msgs []json.RawMessage) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, m := range msgs {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		var blocks []json.RawMessage
		if json.Unmarshal(m, &msg) != nil || json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			var typ struct{ Type string }
			if json.Unmarshal(b, &typ) == nil && typ.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// The calls of a turn to the tools of WithTools are not run again by a
// retried step either: the step answers them as they answered.
func TestRunnerRetriedStepRunsOtherToolsOnce(t *testing.T) {
	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "append", Input: `{"text":"a"}`}, {Name: "append", Input: `{"text":"b"}`}}},
		claudetest.Turn{Error: &claudetest.Error{Status: 500, Type: "api_error", Message: "overloaded"}},
		claudetest.Turn{Text: "Done."},
	)
	defer srv.Close()
	client := srv.Client()
	tool := &appendTool{}
	runner := claude.NewRunner(&client, newMemory(), userParams("hi"), claude.WithTools(tool))
	var errs []error
	for range 3 {
		if _, err := runner.NextMessage(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	if n := len(srv.Requests()); n != 3 || len(errs) != 1 {
		t.Fatalf("%d requests, errors %v; want 3 requests, the second failed", n, errs)
	}
	srv.CheckRefusals(t)
	tool.mu.Lock()
	defer tool.mu.Unlock()
	if len(tool.log) != 2 || tool.log[0] != "a" || tool.log[1] != "b" {
		t.Errorf("append ran with %q, want [a b]", tool.log)
	}
}

// A retried step whose first run was cancelled between a turn's calls:
// the create answered on the first run, the str_replace, cut off then,
// runs on the second. The two runs' tool results differ, and only the SDK
// knows which it added last, so both are sent as the SDK put them and the
// API refuses the request (the README says to start the next step from
// your own messages). When the str_replace's goroutine starts only after
// the cancel, the SDK sends no results on the first run and the retried
// step's one message of results is taken. What must never happen is a
// request the API takes that tells the model the str_replace was
// cancelled when it was made.
func TestRetriedStepAfterCancelNeverMisleads(t *testing.T) {
	calls := []claudetest.ToolUse{
		{Input: `{"command":"create","path":"/memories/x.md","file_text":"one\n"}`},
		{Input: `{"command":"str_replace","path":"/memories/x.md","old_str":"one","new_str":"two"}`},
	}
	srv := claudetest.NewServer(claudetest.Turn{Calls: calls}, claudetest.Turn{Text: "Done."})
	defer srv.Close()
	client := srv.Client()
	store := memstore.New()
	first, cancel := context.WithCancel(context.Background())
	defer cancel()
	runner := claude.NewRunner(&client, memtool.New(store, nil), userParams("hi"),
		claude.WithOnCall(func(_ context.Context, c claude.Call) {
			if strings.Contains(string(c.Input), `"create"`) {
				cancel()
			}
		}))
	retryErr := retryCutStep(t, runner, first, first)
	if got := storetest.ReadText(t, store, "x.md"); got != "two\n" {
		t.Fatalf("x.md = %q, want %q", got, "two\n")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if reqs[1].Problem != "" {
		if retryErr == nil {
			t.Error("the retried step's request was refused, but the step returned no error")
		}
		return
	}
	if retryErr != nil {
		t.Fatal(retryErr)
	}
	results := allToolResults(t, reqs[1].Messages)
	if len(results) != 2 {
		t.Fatalf("the retried step's request was taken with %d tool results, want 2: %s", len(results), reqs[1].Messages)
	}
	if !strings.Contains(string(results[1]), "has been edited") {
		t.Errorf("the request taken does not tell the model that the str_replace was made: %s", results[1])
	}
}

// retryCutStep runs runner's first step on first, which must succeed,
// then its next step on step, whose context must end part way (the step
// fails), then calls that step again as a caller would, and returns what
// the retry returned.
func retryCutStep(t *testing.T, runner *anthropic.BetaToolRunner, first, step context.Context) error {
	t.Helper()
	if _, err := runner.NextMessage(first); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.NextMessage(step); err == nil {
		t.Fatal("the step ran to its end with a cancelled context")
	}
	_, err := runner.NextMessage(context.Background())
	return err
}
