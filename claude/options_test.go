package claude_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
)

// Options with values the API would refuse, or that make no sense, are
// reported; valid ones, the zero values included, are not.
func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		opt  claude.Option
		want string // "" for a valid option
	}{
		{claude.WithCompaction(claude.Compaction{}), ""},
		{claude.WithCompaction(claude.Compaction{Trigger: claude.MinCompactTrigger}), ""},
		{claude.WithCompaction(claude.Compaction{Trigger: claude.MinCompactTrigger - 1}), "below the API's minimum"},
		{claude.WithCompaction(claude.Compaction{Trigger: -5}), "below the API's minimum"},
		{claude.WithClearToolUses(claude.ClearToolUses{}), ""},
		{claude.WithClearToolUses(claude.ClearToolUses{Keep: -1}), "negative"},
		{claude.WithClearToolUses(claude.ClearToolUses{Trigger: -1}), "negative"},
		{claude.WithClearToolUses(claude.ClearToolUses{ClearAtLeast: -1}), "negative"},
		{claude.WithMaxIterations(0), ""},
		{claude.WithMaxIterations(-1), "cannot be negative"},
		{claude.WithRequestTimeout(time.Second), ""},
		{claude.WithRequestTimeout(0), "must be positive"},
		{claude.WithMaxRetries(0), ""},
		{claude.WithMaxRetries(-1), "cannot be negative"},
	} {
		err := claude.CheckOptions(tc.opt)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("got %v, want an error with %q", err, tc.want)
		}
	}
}

// A runner with an invalid option sends nothing and fails with the
// option's error.
func TestRunnerRefusesInvalidOptions(t *testing.T) {
	srv := claudetest.NewServer(claudetest.Turn{Text: "Hi."})
	defer srv.Close()
	client := srv.Client()
	runner := claude.NewRunner(&client, newMemory(), userParams("hello"),
		claude.WithCompaction(claude.Compaction{Trigger: 1000}))
	_, err := runner.RunToCompletion(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Compaction.Trigger 1000 is below the API's minimum") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func userParams(text string) anthropic.BetaToolRunnerParams {
	return anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(text))},
	}}
}

// Preparing prepared params again adds no second edit, guidance block,
// tool or beta.
func TestPrepareParamsTwice(t *testing.T) {
	opts := []claude.Option{
		claude.WithClearToolUses(claude.ClearToolUses{}), claude.WithCompaction(claude.Compaction{}),
		claude.WithOrganizedMemory(), claude.WithTopic("cooking"),
	}
	once := claude.PrepareParams(anthropic.BetaMessageNewParams{System: []anthropic.BetaTextBlockParam{{Text: "Be brief."}}}, opts...)
	twice := claude.PrepareParams(once, opts...)
	if a, b := marshal(t, once), marshal(t, twice); string(a) != string(b) {
		t.Errorf("once:  %s\ntwice: %s", a, b)
	}
	if len(once.ContextManagement.Edits) != 2 || len(once.System) != 3 || len(once.Tools) != 1 {
		t.Errorf("once: %s", marshal(t, once))
	}
}

// A clear_tool_uses edit built by hand still keeps memory's results.
func TestPrepareParamsExcludesMemoryFromOwnEdit(t *testing.T) {
	own := &anthropic.BetaClearToolUses20250919EditParam{ExcludeTools: []string{"web_search"}}
	in := anthropic.BetaMessageNewParams{ContextManagement: anthropic.BetaContextManagementConfigParam{
		Edits: []anthropic.BetaContextManagementConfigEditUnionParam{{OfClearToolUses20250919: own}},
	}}
	p := claude.PrepareParams(in)
	want := `{"edits":[{"type":"clear_tool_uses_20250919","exclude_tools":["memory","web_search"]}]}`
	if got := marshal(t, p.ContextManagement); !claudetest.JSONEqual(t, got, want) {
		t.Errorf("context_management %s\nwant %s", got, want)
	}
	if !slices.Equal(own.ExcludeTools, []string{"web_search"}) {
		t.Errorf("the caller's edit was changed: %q", own.ExcludeTools)
	}
	if !slices.Contains(p.Betas, anthropic.AnthropicBetaContextManagement2025_06_27) {
		t.Errorf("betas %q", p.Betas)
	}
}

// An edit of the caller's own that is the option's edit but for "memory"
// in its ExcludeTools, which PrepareParams adds to both, is the same edit:
// it is not sent twice.
func TestPrepareParamsOwnEditSameAsOption(t *testing.T) {
	own := &anthropic.BetaClearToolUses20250919EditParam{
		Trigger:      anthropic.BetaClearToolUses20250919EditTriggerUnionParam{OfInputTokens: &anthropic.BetaInputTokensTriggerParam{Value: claude.DefaultClearTrigger}},
		Keep:         anthropic.BetaToolUsesKeepParam{Value: claude.DefaultClearKeep},
		ExcludeTools: []string{"web_search"},
	}
	in := anthropic.BetaMessageNewParams{ContextManagement: anthropic.BetaContextManagementConfigParam{
		Edits: []anthropic.BetaContextManagementConfigEditUnionParam{{OfClearToolUses20250919: own}},
	}}
	p := claude.PrepareParams(in, claude.WithClearToolUses(claude.ClearToolUses{ExcludeTools: []string{"web_search"}}))
	if n := len(p.ContextManagement.Edits); n != 1 {
		t.Errorf("%d edits, want 1: %s", n, marshal(t, p.ContextManagement))
	}
}

// CompactBeforeNextTurn on a runner gets the compact-2026-09-04 beta on its
// compaction request without any option; the fake refuses the request
// without it, as the API does.
func TestRunnerCompactsOnDemand(t *testing.T) {
	srv := claudetest.NewServer(claudetest.Turn{Compaction: "The user said hello."})
	defer srv.Close()
	client := srv.Client()
	runner := claude.NewRunner(&client, newMemory(), userParams("hello"),
		claude.WithClearToolUses(claude.ClearToolUses{}))
	runner.CompactBeforeNextTurn(anthropic.BetaCompactionConfigUnionParam{})
	if _, err := runner.NextMessage(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.CheckRefusals(t)
	reqs := srv.Requests()
	if len(reqs) != 1 || !slices.Contains(reqs[0].Betas, string(anthropic.AnthropicBetaCompact2026_09_04)) {
		t.Fatalf("requests %d, betas %q", len(reqs), reqs[0].Betas)
	}
}

// A request that gets no answer fails with context.DeadlineExceeded once
// WithRequestTimeout has passed, after WithMaxRetries more tries where the
// API had not started answering.
func TestRunnerRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		streaming bool
		requests  int // a streamed reply that has started is not tried again
	}{{false, 2}, {true, 1}} {
		hang := claudetest.Turn{Text: "Thinking", Hang: true}
		srv := claudetest.NewServer(hang, hang)
		client := srv.Client()
		// The deadline only ends a hang; it asserts nothing about speed.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		mem := newMemory()
		opts := []claude.Option{claude.WithRequestTimeout(time.Second), claude.WithMaxRetries(1)}
		var err error
		if tc.streaming {
			runner := claude.NewStreamingRunner(&client, mem, userParams("hello"), opts...)
		turns: // AllStreaming goes on after an error: stop at the first
			for events := range runner.AllStreaming(ctx) {
				for _, e := range events {
					if e != nil {
						err = e
						break turns
					}
				}
			}
		} else {
			_, err = claude.NewRunner(&client, mem, userParams("hello"), opts...).RunToCompletion(ctx)
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("streaming=%v: err %v; the test's own deadline passed: %v", tc.streaming, err, ctx.Err() != nil)
		}
		if n := len(srv.Requests()); n != tc.requests {
			t.Errorf("streaming=%v: %d requests, want %d", tc.streaming, n, tc.requests)
		}
		cancel()
		srv.Close()
	}
}

// The GA path gets the tool declaration and the prompt additions, once,
// and refuses what only the beta API has.
func TestPrepareMessageParams(t *testing.T) {
	in := anthropic.MessageNewParams{System: []anthropic.TextBlockParam{{Text: "Be brief."}}}
	p, err := claude.PrepareMessageParams(in, claude.WithOrganizedMemory(), claude.WithTopic("cooking"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := claude.PrepareMessageParams(p, claude.WithOrganizedMemory(), claude.WithTopic("cooking"))
	if err != nil || string(marshal(t, p)) != string(marshal(t, p2)) {
		t.Errorf("preparing twice: %v\n%s\n%s", err, marshal(t, p), marshal(t, p2))
	}
	want := `[{"type":"text","text":"Be brief."},{"type":"text","text":"` + claude.OrganizedMemoryGuidance + `"},
		{"type":"text","text":"Only write down information relevant to cooking in your memory system."}]`
	if got := marshal(t, p.System); !claudetest.JSONEqual(t, got, want) {
		t.Errorf("system %s", got)
	}
	if got := marshal(t, p.Tools); !claudetest.JSONEqual(t, got, `[{"name":"memory","type":"memory_20250818"}]`) {
		t.Errorf("tools %s", got)
	}
	for _, opt := range []claude.Option{claude.WithClearToolUses(claude.ClearToolUses{}), claude.WithCompaction(claude.Compaction{}), claude.WithMaxIterations(-1)} {
		if _, err := claude.PrepareMessageParams(in, opt); err == nil {
			t.Errorf("%s: no error", marshal(t, claude.PrepareParams(anthropic.BetaMessageNewParams{}, opt).ContextManagement))
		}
	}
	msg := &anthropic.Message{Content: []anthropic.ContentBlockUnion{{Type: "text", Text: "One."}, {Type: "tool_use"}, {Type: "text", Text: "Two."}}}
	if got := claude.MessageText(msg); got != "One.\n\nTwo." {
		t.Errorf("MessageText = %q", got)
	}
}

// renamed is a tool of WithTools under another name.
type renamed struct {
	anthropic.BetaTool
	name string
}

func (r renamed) Name() string { return r.name }

// Tools of WithTools that the runner cannot offer as they are fail up
// front: one named "memory" would take memory's calls (the SDK runner
// keeps one tool per name), two of one name would be declared twice,
// and a name outside the API's pattern is refused by the API. Each is
// reported by CheckOptions, and a runner with one sends nothing.
func TestWithToolsNames(t *testing.T) {
	tool := &appendTool{}
	for _, tc := range []struct {
		tools []anthropic.BetaTool
		want  string
	}{
		{[]anthropic.BetaTool{tool, claude.NewSearchTool(newMemory())}, ""},
		{[]anthropic.BetaTool{renamed{tool, "memory"}}, `"memory"`},
		{[]anthropic.BetaTool{tool, renamed{tool, "append"}}, `"append"`},
		{[]anthropic.BetaTool{renamed{tool, "a.b"}}, `"a.b"`},
		{[]anthropic.BetaTool{renamed{tool, strings.Repeat("x", 129)}}, "xxx"},
		{[]anthropic.BetaTool{renamed{tool, ""}}, `""`},
	} {
		err := claude.CheckOptions(claude.WithTools(tc.tools...))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckOptions: got %v, want an error with %q", err, tc.want)
		}
	}

	// The model's memory call must reach memory, never a tool that
	// only shares its name.
	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{{Input: `{"command":"create","path":"/memories/a.md","file_text":"a"}`}}},
		claudetest.Turn{Text: "Done."},
	)
	defer srv.Close()
	client := srv.Client()
	mem := newMemory()
	runner := claude.NewRunner(&client, mem, userParams("hi"), claude.WithTools(renamed{tool, "memory"}))
	_, err := runner.RunToCompletion(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"memory"`) {
		t.Errorf("runner with a second tool named memory: err = %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	if tool.calls != 0 {
		t.Errorf("the tool that shares memory's name ran %d times", tool.calls)
	}
}
