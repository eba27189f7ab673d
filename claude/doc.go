// Package claude connects memtool to the Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2): it gives Claude's memory tool
// (memory_20250818) a backend, a *memtool.Memory, in the three ways a Go
// program talks to Claude.
//
// # The SDK's tool runner
//
// NewRunner and NewStreamingRunner return the SDK's own runners
// (client.Beta.Messages.NewToolRunner and NewToolRunnerStreaming) with the
// memory tool declared as {"type":"memory_20250818","name":"memory"} and a
// Tool installed to run it:
//
//	store, _ := filestore.Open("./memories")
//	mem := memtool.New(store, nil)
//	runner := claude.NewRunner(&client, mem, anthropic.BetaToolRunnerParams{
//		BetaMessageNewParams: anthropic.BetaMessageNewParams{
//			Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 4096,
//			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))},
//		},
//	}, claude.WithClearToolUses(claude.ClearToolUses{}))
//	final, err := runner.RunToCompletion(ctx)
//
// Options add context editing that clears old tool results but keeps
// memory's (WithClearToolUses), server-side compaction (WithCompaction), the
// beta headers those need, the memory tool docs' optional system-prompt
// additions (WithOrganizedMemory, WithTopic), guidance such as a template's
// (WithGuidance), an iteration cap, message threads on or off, more tools,
// and a callback for every memory command (WithOnCall).
//
// # Your own loop
//
// Declare the tool with BetaToolParam (beta API) or ToolParam (GA API), send
// the request, and pass each assistant message to Tool.BetaToolResults or
// Tool.ToolResults: they return the tool_result blocks that answer its
// memory tool_use blocks, in the order of the calls, ready for the next user
// message. PrepareParams applies the runner's options to a plain
// BetaMessageNewParams.
//
// # What the model receives
//
// A command's text result is one text block; an image file is one image
// block. A failed command reaches the model as exactly memtool's text,
// "Error: …", once, with is_error set. Tool.Execute reports a failure as a
// *CommandError whose message lacks the "Error: " prefix, because the SDK
// runner adds it. The SDK runner decodes a call's input before the tool
// sees it, so there memtool cannot refuse duplicate keys; BetaToolResults
// and ToolResults see the input as the model sent it.
//
// # Concurrency
//
// A Tool is safe for concurrent use. The SDK runner runs one turn's tool
// calls in parallel goroutines; memtool.Memory is linearizable, so no update
// is lost, but calls of one turn that touch the same file may run in any
// order. BetaToolResults and ToolResults also run a turn's calls in
// parallel, except that calls whose paths overlap (the same file, or a
// directory and something in it) run in the order the model wrote them.
//
// # Multi-session work
//
// Package template (claude/template) holds the multi-session development
// pattern: it seeds a store with a progress log, a feature checklist and a
// decisions file, and its Guidance is the system-prompt text that goes with
// them (pass it to WithGuidance).
package claude
