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
//	store, _ := filestore.Open("./memories", nil)
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
// a callback for every memory command (WithOnCall), and a per-request
// timeout and retry count (WithRequestTimeout, WithMaxRetries).
//
// # Options say what they do
//
// A numeric option whose value the API would refuse or that makes no
// sense (a negative count, a compaction trigger below MinCompactTrigger) is
// invalid: CheckOptions reports it, and a runner built with it fails its
// first step with that error before sending anything. A zero value means
// the documented default. Preparing params again (PrepareParams, or a
// runner over params you prepared) adds no second edit, system block, tool
// or beta. A clear_tool_uses_20250919 edit that you build yourself gets
// "memory" added to its ExcludeTools, as WithClearToolUses's does, so
// memory's results are never cleared. The runners add the
// compact-2026-09-04 beta to the request that the SDK runner's
// CompactBeforeNextTurn sends; no option is needed for it.
//
// # No hangs
//
// WithRequestTimeout bounds each attempt of each request, the reading of a
// streamed reply included; a stalled API fails the step with
// context.DeadlineExceeded. WithMaxRetries sets how many more attempts a
// failed request gets; a streamed reply that has started is not tried
// again. Without them the client's own settings hold.
//
// # Your own loop
//
// Declare the tool with BetaToolParam (beta API) or ToolParam (GA API), send
// the request, and pass each assistant message to Tool.BetaToolResults or
// Tool.ToolResults: they return the tool_result blocks that answer its
// memory tool_use blocks, in the order of the calls, ready for the next user
// message. PrepareParams applies the options to a plain
// BetaMessageNewParams. On the GA API (client.Messages.New),
// PrepareMessageParams declares the tool and adds the prompt additions
// (WithOrganizedMemory, WithTopic, WithGuidance), and MessageText reads a
// reply's text; context editing and compaction exist only in the beta API,
// so PrepareMessageParams refuses those options.
//
// # Coming from the Python or TypeScript SDK's helper
//
// Their local filesystem memory helpers keep the model's /memories/x.md at
// <base>/memories/x.md. OpenHelperDir(base) opens that directory as a file
// store (HelperDir(base) names it), so the model sees the same paths it
// saw with those helpers, not /memories/memories/x.md. Tool.ClearAll
// deletes every memory, as the Python helper's clear_all_memory does.
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
// # Concurrency and the order of a turn's calls
//
// A Tool is safe for concurrent use. Calls of one assistant turn that touch
// overlapping paths (the same file, or a directory and something in it; a
// rename touches both of its paths) run in the order the model wrote them,
// on every path: NewRunner, NewStreamingRunner, BetaToolResults and
// ToolResults. Calls on unrelated paths still run at the same time.
//
// The SDK runner starts one goroutine per call and passes the tool only the
// call's input, so the runners' Tool follows the turn itself
// (ToolOptions.Turn, set to the runner's LastMessage): when a call
// arrives, the Tool reads the runner's last assistant message, lists its
// memory calls as the runner does (those after the last "fallback" block),
// finds the call among them by its input (compared as decoded JSON, so
// key order and spacing do not matter), and waits until every earlier
// overlapping call of the turn has run. A call that is not in that message
// runs at once, and releases the calls that wait, so that nothing waits
// for a call that will not come; a cancelled context also ends the wait,
// and the call then reports that it was not run. A call that the runner
// does not pass to the tool at all (you took its tool away or replaced it,
// RemoveTools or AddTools, after the runner returned the message) is
// waited for until no call of the turn has run, arrived or ended for a
// second; the calls that wait for it then run. Calls with identical input are told apart by the order in
// which they arrive, so among those, which tool_use id gets which result
// is not kept (Call.ID is "" for them). To get the same order with a
// runner you build yourself, set ToolOptions.Turn to its LastMessage.
//
// When a step of the SDK runner fails after the turn's calls ran (its
// request failed) and is run again, the runner runs the turn's calls again:
// a call that has run, memory's or a tool's of WithTools, then answers as
// it did the first time and is not run again (OnCall is not called again),
// so no change is made twice; a call that did not run (its context ended
// before it started) runs then, after the calls it follows. A call that
// started answers as it did even when its context ended during it: a
// store or MCP server whose answer was lost may have made the change, and
// the model is told it may or may not have been made.
//
// # An agent with hands
//
// Two subpackages add tools from the Anthropic SDK itself next to the
// memory tool, each as an Option for NewRunner and NewStreamingRunner and
// as a tool list for your own loop (DeclareTools declares them, RunTools
// answers their calls one at a time in the order the model wrote them):
//
//   - claude/workdir: the SDK's agent toolset (read, write, edit, glob,
//     grep) confined to a work directory, and bash only when asked for;
//     bash is not confined.
//   - claude/mcptools: the tools of every MCP server named in a
//     configuration file of the shape Claude Desktop and Claude Code read,
//     {"mcpServers": {…}}.
//
// They are packages of their own so that a program that only wants memory
// does not pull in a PTY library or the MCP SDK. Memory calls keep their
// order within a turn whatever other tools the turn calls. The SDK runner
// starts one goroutine per call; NewRunner and NewStreamingRunner make the
// calls of one turn to the tools of WithTools wait for each other, so they
// run one at a time in the order the model wrote them (they know nothing of
// paths memtool could compare), without waiting for memory calls.
//
// # Multi-session work
//
// Package template (claude/template) holds the multi-session development
// pattern: it seeds a store with a progress log, a feature checklist and a
// decisions file, and its Guidance is the system-prompt text that goes with
// them (pass it to WithGuidance).
package claude
