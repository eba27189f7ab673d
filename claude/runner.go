package claude

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/memtool/memtool"
)

// Defaults of the context-management presets.
const (
	// DefaultClearTrigger is when old tool results start being cleared, in
	// input tokens (the API's own default).
	DefaultClearTrigger = 100000
	// DefaultClearKeep is how many of the latest tool uses keep their results.
	DefaultClearKeep = 3
	// DefaultCompactTrigger is when the conversation is compacted, in input
	// tokens (the API's own default).
	DefaultCompactTrigger = 150000
)

// The docs' optional system-prompt additions for the memory tool.
const (
	// OrganizedMemoryGuidance asks the model to keep its memory folder tidy.
	OrganizedMemoryGuidance = "Note: when editing your memory folder, always try to keep its content up-to-date, " +
		"coherent and organized. You can rename or delete files that are no longer relevant. " +
		"Do not create new files unless necessary."
)

// An Option configures NewRunner, NewStreamingRunner and PrepareParams.
type Option func(*config)

type config struct {
	edits         []anthropic.BetaContextManagementConfigEditUnionParam
	betas         []anthropic.AnthropicBeta
	guidance      []string
	maxIterations int
	threads       *bool
	tools         []anthropic.BetaTool
	onCall        func(context.Context, Call)
	requestOpts   []option.RequestOption
}

// ClearToolUses configures the clear_tool_uses_20250919 context edit: once
// the prompt grows past Trigger input tokens, the API replaces the results
// of old tool uses with a placeholder, keeping the latest Keep. The memory
// tool's results are never cleared: it is always in ExcludeTools, so what
// the model saved stays readable while everything else is cleared.
type ClearToolUses struct {
	// Trigger is the prompt size, in input tokens, that starts clearing.
	// Default DefaultClearTrigger.
	Trigger int64
	// Keep is how many of the latest tool uses keep their results.
	// Default DefaultClearKeep.
	Keep int64
	// ClearAtLeast, if positive, makes each clearing remove at least this
	// many input tokens, so the prompt cache is not invalidated for little.
	ClearAtLeast int64
	// ClearInputs also clears the inputs of the cleared tool calls.
	ClearInputs bool
	// ExcludeTools are more tools whose results are never cleared.
	ExcludeTools []string
}

// WithClearToolUses adds the clear_tool_uses_20250919 edit, which keeps the
// memory tool's results (and the context-management-2025-06-27 beta).
func WithClearToolUses(c ClearToolUses) Option {
	return func(cfg *config) {
		edit := &anthropic.BetaClearToolUses20250919EditParam{
			Trigger: anthropic.BetaClearToolUses20250919EditTriggerUnionParam{
				OfInputTokens: &anthropic.BetaInputTokensTriggerParam{Value: orDefault(c.Trigger, DefaultClearTrigger)},
			},
			Keep:         anthropic.BetaToolUsesKeepParam{Value: orDefault(c.Keep, DefaultClearKeep)},
			ExcludeTools: append([]string{ToolName}, slices.DeleteFunc(slices.Clone(c.ExcludeTools), func(s string) bool { return s == ToolName })...),
		}
		if c.ClearAtLeast > 0 {
			edit.ClearAtLeast = anthropic.BetaInputTokensClearAtLeastParam{Value: c.ClearAtLeast}
		}
		if c.ClearInputs {
			edit.ClearToolInputs = anthropic.BetaClearToolUses20250919EditClearToolInputsUnionParam{OfBool: anthropic.Bool(true)}
		}
		cfg.edits = append(cfg.edits, anthropic.BetaContextManagementConfigEditUnionParam{OfClearToolUses20250919: edit})
	}
}

// WithClearThinking adds the clear_thinking_20251015 edit, which keeps the
// thinking blocks of the last keepTurns assistant turns (all of them when
// keepTurns is negative), for conversations with extended thinking.
func WithClearThinking(keepTurns int64) Option {
	return func(cfg *config) {
		edit := &anthropic.BetaClearThinking20251015EditParam{}
		if keepTurns < 0 {
			edit.Keep.OfAllThinkingTurns = &anthropic.BetaAllThinkingTurnsParam{}
		} else {
			edit.Keep.OfThinkingTurns = &anthropic.BetaThinkingTurnsParam{Value: keepTurns}
		}
		cfg.edits = append(cfg.edits, anthropic.BetaContextManagementConfigEditUnionParam{OfClearThinking20251015: edit})
	}
}

// Compaction configures server-side compaction, the compact_20260112 edit:
// once the prompt grows past Trigger input tokens, the API summarizes the
// conversation so far and continues from the summary.
type Compaction struct {
	// Trigger is the prompt size, in input tokens, that starts a
	// compaction. Default DefaultCompactTrigger.
	Trigger int64
	// Instructions replace the API's default summarization prompt.
	Instructions string
	// PauseAfter makes the API return after compacting (stop_reason
	// "compaction"); the runner sends the turn back and goes on.
	PauseAfter bool
}

// WithCompaction adds the compact_20260112 edit (and the compact-2026-01-12
// beta). Memory files survive a compaction: the model reads them again.
// It cannot be combined with the runner's CompactBeforeNextTurn.
func WithCompaction(c Compaction) Option {
	return func(cfg *config) {
		edit := &anthropic.BetaCompact20260112EditParam{
			Trigger: anthropic.BetaInputTokensTriggerParam{Value: orDefault(c.Trigger, DefaultCompactTrigger)},
		}
		if c.Instructions != "" {
			edit.Instructions = anthropic.String(c.Instructions)
		}
		if c.PauseAfter {
			edit.PauseAfterCompaction = anthropic.Bool(true)
		}
		cfg.edits = append(cfg.edits, anthropic.BetaContextManagementConfigEditUnionParam{OfCompact20260112: edit})
	}
}

// WithCompactBeforeNextTurn adds the compact-2026-09-04 beta, which the
// runner's CompactBeforeNextTurn needs, so that you can compact on demand.
func WithCompactBeforeNextTurn() Option {
	return func(cfg *config) { cfg.betas = append(cfg.betas, anthropic.AnthropicBetaCompact2026_09_04) }
}

// WithOrganizedMemory adds the docs' note that asks the model to keep its
// memory folder up to date, coherent and organized to the system prompt.
func WithOrganizedMemory() Option {
	return WithGuidance(OrganizedMemoryGuidance)
}

// WithTopic adds the docs' instruction to the system prompt that limits what
// the model records: "Only write down information relevant to <topic> in
// your memory system."
func WithTopic(topic string) Option {
	return WithGuidance("Only write down information relevant to " + topic + " in your memory system.")
}

// WithGuidance appends text to the system prompt as one more text block,
// after the request's own system prompt; for example a template's Guidance.
func WithGuidance(text string) Option {
	return func(cfg *config) {
		if text != "" {
			cfg.guidance = append(cfg.guidance, text)
		}
	}
}

// WithMaxIterations caps the API calls of a run (0: no cap).
func WithMaxIterations(n int) Option {
	return func(cfg *config) { cfg.maxIterations = n }
}

// WithThreads turns the SDK runner's server-side message threads on (its
// default: later requests send only what is new) or off (every request
// sends the whole history).
func WithThreads(on bool) Option {
	return func(cfg *config) { cfg.threads = &on }
}

// WithTools gives the runner more tools to run besides memory.
func WithTools(tools ...anthropic.BetaTool) Option {
	return func(cfg *config) { cfg.tools = append(cfg.tools, tools...) }
}

// WithOnCall calls fn after every memory command, as ToolOptions.OnCall.
func WithOnCall(fn func(ctx context.Context, c Call)) Option {
	return func(cfg *config) { cfg.onCall = fn }
}

// WithRequestOptions passes options to every request the runner sends.
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(cfg *config) { cfg.requestOpts = append(cfg.requestOpts, opts...) }
}

func orDefault(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

func newConfig(opts []Option) *config {
	cfg := &config{}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	return cfg
}

// PrepareParams returns params ready for a request with the memory tool:
// the tool declared (unless a tool named "memory" already is), the options'
// context edits appended to ContextManagement, their guidance appended to
// System, and every beta header that the request's features need added to
// Betas: context-management-2025-06-27 for clear_* edits,
// compact-2026-01-12 for a compact_20260112 edit, compact-2026-09-04 for
// Compaction. Runner-only options (iterations, threads, tools, OnCall) are
// ignored. params is not modified.
func PrepareParams(params anthropic.BetaMessageNewParams, opts ...Option) anthropic.BetaMessageNewParams {
	return prepare(params, newConfig(opts))
}

func prepare(params anthropic.BetaMessageNewParams, cfg *config) anthropic.BetaMessageNewParams {
	if !slices.ContainsFunc(params.Tools, func(t anthropic.BetaToolUnionParam) bool { return toolName(t) == ToolName }) {
		params.Tools = append(slices.Clip(params.Tools), BetaToolParam())
	}
	if len(cfg.edits) > 0 {
		params.ContextManagement.Edits = append(slices.Clip(params.ContextManagement.Edits), cfg.edits...)
	}
	for _, text := range cfg.guidance {
		params.System = append(slices.Clip(params.System), anthropic.BetaTextBlockParam{Text: text})
	}
	params.Betas = slices.Clip(params.Betas)
	addBeta := func(b anthropic.AnthropicBeta) {
		if !slices.Contains(params.Betas, b) {
			params.Betas = append(params.Betas, b)
		}
	}
	for _, edit := range params.ContextManagement.Edits {
		switch {
		case edit.OfClearToolUses20250919 != nil, edit.OfClearThinking20251015 != nil:
			addBeta(anthropic.AnthropicBetaContextManagement2025_06_27)
		case edit.OfCompact20260112 != nil:
			addBeta(anthropic.AnthropicBetaCompact2026_01_12)
		}
	}
	if !param.IsOmitted(params.Compaction) {
		addBeta(anthropic.AnthropicBetaCompact2026_09_04)
	}
	for _, b := range cfg.betas {
		addBeta(b)
	}
	return params
}

// toolName returns the name a tool declaration carries on the wire.
func toolName(t anthropic.BetaToolUnionParam) string {
	if name := t.GetName(); name != nil && *name != "" {
		return *name
	}
	// Server tools elide their constant name until marshaled.
	data, err := json.Marshal(t)
	if err != nil {
		return ""
	}
	var wire struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(data, &wire)
	return wire.Name
}

// runnerArgs builds what both runner constructors pass to the SDK.
func runnerArgs(mem *memtool.Memory, params anthropic.BetaToolRunnerParams, opts []Option) ([]anthropic.BetaTool, anthropic.BetaToolRunnerParams, []option.RequestOption) {
	cfg := newConfig(opts)
	params.BetaMessageNewParams = prepare(params.BetaMessageNewParams, cfg)
	if cfg.maxIterations != 0 {
		params.MaxIterations = cfg.maxIterations
	}
	if cfg.threads != nil {
		params.DisableThread = !*cfg.threads
	}
	tools := append([]anthropic.BetaTool{NewTool(mem, &ToolOptions{OnCall: cfg.onCall})}, cfg.tools...)
	return tools, params, cfg.requestOpts
}

// NewRunner returns the SDK's tool runner (client.Beta.Messages.NewToolRunner)
// with the memory tool declared and backed by mem, and params prepared as
// PrepareParams does. It sends nothing until you step it: RunToCompletion,
// NextMessage or All.
func NewRunner(client *anthropic.Client, mem *memtool.Memory, params anthropic.BetaToolRunnerParams, opts ...Option) *anthropic.BetaToolRunner {
	tools, params, reqOpts := runnerArgs(mem, params, opts)
	return client.Beta.Messages.NewToolRunner(tools, params, reqOpts...)
}

// NewStreamingRunner is NewRunner for the SDK's streaming runner
// (client.Beta.Messages.NewToolRunnerStreaming).
func NewStreamingRunner(client *anthropic.Client, mem *memtool.Memory, params anthropic.BetaToolRunnerParams, opts ...Option) *anthropic.BetaToolRunnerStreaming {
	tools, params, reqOpts := runnerArgs(mem, params, opts)
	return client.Beta.Messages.NewToolRunnerStreaming(tools, params, reqOpts...)
}

// Text returns the text blocks of an assistant message, joined with blank
// lines; "" for nil.
func Text(msg *anthropic.BetaMessage) string {
	if msg == nil {
		return ""
	}
	var parts []string
	for _, block := range msg.Content {
		if block.Type == "text" && block.Text != "" {
			parts = append(parts, block.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
