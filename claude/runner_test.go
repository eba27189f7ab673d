package claude_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/storetest"
)

// memoryScript is a conversation that views /memories first, creates files,
// edits one file with several calls in one turn, hits two errors, views an
// image, renames, and ends.
func memoryScript() []claudetest.Turn {
	return []claudetest.Turn{
		{Text: "Let me check my memory first.", Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}},
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"create","path":"/memories/notes.md","file_text":"# Notes\n- alpha\n- beta\n- gamma\n"}`},
			{Input: `{"command":"create","path":"/memories/log/session.md","file_text":"started\n"}`},
		}},
		{Text: "Updating my notes.", Calls: []claudetest.ToolUse{
			{Input: `{"command":"str_replace","path":"/memories/notes.md","old_str":"- alpha","new_str":"- ALPHA"}`},
			{Input: `{"command":"str_replace","path":"/memories/notes.md","old_str":"- beta","new_str":"- BETA"}`},
			{Input: `{"command":"str_replace","path":"/memories/notes.md","old_str":"- gamma","new_str":"- GAMMA"}`},
			{Input: `{"command":"insert","path":"/memories/notes.md","insert_line":0,"insert_text":"Top\n"}`},
		}},
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"str_replace","path":"/memories/notes.md","old_str":"- delta","new_str":"- DELTA"}`},
			{Input: `{"command":"view","path":"/memories/pic.png"}`},
			{Input: `{"command":"view","path":"/etc/passwd"}`},
		}},
		{Calls: []claudetest.ToolUse{{Input: `{"command":"rename","old_path":"/memories/log/session.md","new_path":"/memories/archive/session.md"}`}}},
		{Text: "Done: my notes are saved."},
	}
}

const wantContextManagement = `{"edits":[
	{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":30000},
	 "keep":{"type":"tool_uses","value":2},"clear_at_least":{"type":"input_tokens","value":5000},
	 "exclude_tools":["memory"]},
	{"type":"compact_20260112","trigger":{"type":"input_tokens","value":120000},"instructions":"Keep file names."}]}`

func TestRunnerConversation(t *testing.T) {
	for _, threads := range []bool{true, false} {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("threads=%v/streaming=%v", threads, streaming), func(t *testing.T) {
				testRunnerConversation(t, threads, streaming)
			})
		}
	}
}

func testRunnerConversation(t *testing.T, threads, streaming bool) {
	ctx := context.Background()
	f := newFixture(t, memoryScript())

	var mu sync.Mutex
	var summaries []string
	params := anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 2048,
		System:    []anthropic.BetaTextBlockParam{{Text: "You are a careful assistant."}},
		Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Take notes."))},
	}}
	opts := []claude.Option{
		claude.WithClearToolUses(claude.ClearToolUses{Trigger: 30000, Keep: 2, ClearAtLeast: 5000}),
		claude.WithCompaction(claude.Compaction{Trigger: 120000, Instructions: "Keep file names."}),
		claude.WithOrganizedMemory(),
		claude.WithTopic("the user's project"),
		claude.WithMaxIterations(10),
		claude.WithThreads(threads),
		claude.WithOnCall(func(_ context.Context, c claude.Call) {
			mu.Lock()
			summaries = append(summaries, c.Summary())
			mu.Unlock()
		}),
	}

	var final *anthropic.BetaMessage
	var streamed strings.Builder
	if streaming {
		runner := claude.NewStreamingRunner(&f.client, f.mem, params, opts...)
		for events, err := range runner.AllStreaming(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			for ev, err := range events {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
					streamed.WriteString(ev.Delta.Text)
				}
			}
		}
		if err := runner.Err(); err != nil {
			t.Fatal(err)
		}
		final = runner.LastMessage()
	} else {
		runner := claude.NewRunner(&f.client, f.mem, params, opts...)
		var err error
		final, err = runner.RunToCompletion(ctx)
		if err != nil {
			f.srv.CheckRefusals(t)
			t.Fatal(err)
		}
	}
	f.srv.CheckRefusals(t)

	if got := claude.Text(final); got != "Done: my notes are saved." {
		t.Errorf("final text = %q", got)
	}
	if streaming && !strings.Contains(streamed.String(), "Done: my notes are saved.") {
		t.Errorf("streamed text %q lacks the final answer", streamed.String())
	}

	reqs := f.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}

	// What every request carries.
	wantBetas := "context-management-2025-06-27,compact-2026-01-12"
	if threads {
		wantBetas += ",message-threads-2026-08-12"
	}
	wantSystem := fmt.Sprintf(`[{"type":"text","text":"You are a careful assistant."},{"type":"text","text":%q},
		{"type":"text","text":"Only write down information relevant to the user's project in your memory system."}]`,
		claude.OrganizedMemoryGuidance)
	for i, r := range reqs {
		if got := r.Header.Get("Anthropic-Beta"); got != wantBetas {
			t.Errorf("request %d: anthropic-beta %q, want %q", i+1, got, wantBetas)
		}
		if !claudetest.JSONEqual(t, r.ContextManagement, wantContextManagement) {
			t.Errorf("request %d: context_management %s", i+1, r.ContextManagement)
		}
		if !claudetest.JSONEqual(t, r.Tools, `[{"name":"memory","type":"memory_20250818"}]`) {
			t.Errorf("request %d: tools %s", i+1, r.Tools)
		}
		if !claudetest.JSONEqual(t, r.System, wantSystem) {
			t.Errorf("request %d: system %s", i+1, r.System)
		}
		if r.Stream != streaming {
			t.Errorf("request %d: stream = %v", i+1, r.Stream)
		}
		wantThread := ""
		switch {
		case threads && i == 0:
			wantThread = "create"
		case threads:
			wantThread = "continue"
		}
		if r.Thread != wantThread {
			t.Errorf("request %d: thread %q, want %q", i+1, r.Thread, wantThread)
		}
		// On a thread, later requests send only the new message.
		if sentAll := strings.Contains(string(r.Body), `"tools"`); sentAll == (wantThread == "continue") {
			t.Errorf("request %d (thread %q): tools sent = %v", i+1, wantThread, sentAll)
		}
		if want := 1 + 2*i; len(r.Messages) != want {
			t.Errorf("request %d: conversation of %d messages, want %d", i+1, len(r.Messages), want)
		}
	}

	// The tool results, exactly as they reached the API.
	want := map[int][]string{
		1: {textResult("toolu_01_1", fmt.Sprintf("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n%dB\t/memories/pic.png", len(f.pic)))},
		2: {
			textResult("toolu_02_1", "File created successfully at: /memories/notes.md"),
			textResult("toolu_02_2", "File created successfully at: /memories/log/session.md"),
		},
		4: {
			errorResult("toolu_04_1", "Error: No replacement was performed, old_str `- delta` did not appear verbatim in /memories/notes.md."),
			imageResult("toolu_04_2", "image/png", base64.StdEncoding.EncodeToString(f.pic)),
			errorResult("toolu_04_3", "Error: Path must be /memories or start with /memories/, got: /etc/passwd"),
		},
		5: {textResult("toolu_05_1", "Successfully renamed /memories/log/session.md to /memories/archive/session.md")},
	}
	checkResults(t, reqs, want)
	// Four calls on one file in one turn: none failed, none lost.
	third := reqs[3].ToolResults()
	if len(third) != 4 {
		t.Fatalf("request 4: %d tool results, want 4", len(third))
	}
	for k, r := range third {
		if r.IsError || r.ToolUseID != fmt.Sprintf("toolu_03_%d", k+1) {
			t.Errorf("request 4, result %d: %s", k+1, r.Raw)
		}
	}
	if got, want := storetest.ReadText(t, f.store, "notes.md"), "Top\n# Notes\n- ALPHA\n- BETA\n- GAMMA\n"; got != want {
		t.Errorf("notes.md = %q, want %q", got, want)
	}
	if got := storetest.ReadText(t, f.store, "archive/session.md"); got != "started\n" {
		t.Errorf("archive/session.md = %q", got)
	}
	if _, err := f.store.Stat(ctx, "log/session.md"); err == nil {
		t.Error("log/session.md is still there after the rename")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(summaries) != 11 {
		t.Errorf("OnCall saw %d calls, want 11: %q", len(summaries), summaries)
	}
	for _, want := range []string{
		"view /memories: ok",
		"create /memories/notes.md: ok",
		fmt.Sprintf("view /memories/pic.png: image/png image, %d bytes", len(f.pic)),
		"view /etc/passwd: error: Path must be /memories or start with /memories/, got: /etc/passwd",
		"rename /memories/log/session.md -> /memories/archive/session.md: ok",
	} {
		if !slices.Contains(summaries, want) {
			t.Errorf("OnCall summaries lack %q: %q", want, summaries)
		}
	}
}

// A request the API would refuse for a missing beta header is refused by the
// fake too, so the header assertions above can fail.
func TestFakeRefusesContextEditingWithoutBeta(t *testing.T) {
	srv := claudetest.NewServer(claudetest.Turn{Text: "hi"})
	defer srv.Close()
	client := srv.Client()
	params := anthropic.BetaMessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 100,
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("x"))},
		Tools:    []anthropic.BetaToolUnionParam{claude.BetaToolParam()},
		ContextManagement: anthropic.BetaContextManagementConfigParam{Edits: []anthropic.BetaContextManagementConfigEditUnionParam{
			{OfClearToolUses20250919: &anthropic.BetaClearToolUses20250919EditParam{}},
		}},
	}
	if _, err := client.Beta.Messages.New(context.Background(), params); err == nil {
		t.Fatal("the fake accepted clear_tool_uses without the context-management beta")
	}
	// The same request, prepared, goes through.
	srv2 := claudetest.NewServer(claudetest.Turn{Text: "hi"})
	defer srv2.Close()
	client2 := srv2.Client()
	if _, err := client2.Beta.Messages.New(context.Background(), claude.PrepareParams(params)); err != nil {
		t.Fatalf("prepared request refused: %v", err)
	}
}
