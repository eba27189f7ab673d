package claude

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
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
	// MinCompactTrigger is the smallest compaction trigger the API accepts.
	MinCompactTrigger = 50000
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
	errs          []error // what invalid options reported
}

// invalid records an invalid option's error.
func (cfg *config) invalid(format string, args ...any) {
	cfg.errs = append(cfg.errs, fmt.Errorf("claude: "+format, args...))
}

// CheckOptions reports the options whose values the API would refuse or
// that make no sense (a negative count, a compaction trigger below
// MinCompactTrigger), all of them joined; nil when every option is valid.
// NewRunner and NewStreamingRunner with an invalid option return a runner
// whose every request fails with this error before anything is sent.
func CheckOptions(opts ...Option) error {
	return errors.Join(newConfig(opts).errs...)
}

// ClearToolUses configures the clear_tool_uses_20250919 context edit: once
// the prompt grows past Trigger input tokens, the API replaces the results
// of old tool uses with a placeholder, keeping the latest Keep. The memory
// tool's results are never cleared: it is always in ExcludeTools, so what
// the model saved stays readable while everything else is cleared. A
// clear_tool_uses_20250919 edit that you build yourself and put in
// params.ContextManagement gets "memory" added to its ExcludeTools too,
// when PrepareParams or a runner prepares the params.
type ClearToolUses struct {
	// Trigger is the prompt size, in input tokens, that starts clearing.
	// 0 means DefaultClearTrigger; negative is invalid.
	Trigger int64
	// Keep is how many of the latest tool uses keep their results.
	// 0 means DefaultClearKeep; negative is invalid.
	Keep int64
	// ClearAtLeast, if positive, makes each clearing remove at least this
	// many input tokens, so the prompt cache is not invalidated for little.
	// Negative is invalid.
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
		if c.Trigger < 0 || c.Keep < 0 || c.ClearAtLeast < 0 {
			cfg.invalid("ClearToolUses: Trigger %d, Keep %d, ClearAtLeast %d: none may be negative", c.Trigger, c.Keep, c.ClearAtLeast)
		}
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
// keepTurns is negative), for conversations with extended thinking. It is
// sent before the other edits, where the API wants it.
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
	// compaction. 0 means DefaultCompactTrigger; other values below
	// MinCompactTrigger are invalid, as the API refuses them.
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
		if c.Trigger != 0 && c.Trigger < MinCompactTrigger {
			cfg.invalid("Compaction.Trigger %d is below the API's minimum, %d input tokens", c.Trigger, MinCompactTrigger)
		}
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

// WithCompactBeforeNextTurn adds the compact-2026-09-04 beta to every
// request.
//
// Deprecated: NewRunner and NewStreamingRunner add that beta to the
// request that CompactBeforeNextTurn sends, and PrepareParams adds it when
// params.Compaction is set; nothing else needs it.
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

// WithMaxIterations caps the API calls of a run (0: no cap; negative is
// invalid).
func WithMaxIterations(n int) Option {
	return func(cfg *config) {
		if n < 0 {
			cfg.invalid("WithMaxIterations(%d): the cap cannot be negative", n)
		}
		cfg.maxIterations = n
	}
}

// WithRequestTimeout bounds each attempt of each request the runner sends,
// the reading of a streamed reply included: an API that stops answering
// fails the attempt with context.DeadlineExceeded once d has passed, and
// the attempt is retried (WithMaxRetries) unless part of a streamed reply
// had arrived. d must be positive.
func WithRequestTimeout(d time.Duration) Option {
	return func(cfg *config) {
		if d <= 0 {
			cfg.invalid("WithRequestTimeout(%v): the timeout must be positive", d)
			return
		}
		cfg.requestOpts = append(cfg.requestOpts, option.WithRequestTimeout(d))
	}
}

// WithMaxRetries sets how many times a failed request is tried again
// (connection errors, timeouts, 408, 409, 429 and 5xx answers); 0 tries
// once. Without it the client's setting holds (the SDK's default is 2).
// n must not be negative.
func WithMaxRetries(n int) Option {
	return func(cfg *config) {
		if n < 0 {
			cfg.invalid("WithMaxRetries(%d): the count cannot be negative", n)
			return
		}
		cfg.requestOpts = append(cfg.requestOpts, option.WithMaxRetries(n))
	}
}

// WithThreads turns the SDK runner's server-side message threads on (its
// default: later requests send only what is new) or off (every request
// sends the whole history).
func WithThreads(on bool) Option {
	return func(cfg *config) { cfg.threads = &on }
}

// WithTools gives the runner more tools to run besides memory. The calls
// of one turn to these tools run one at a time, in the order the model
// wrote them (a write and then an edit of one file work as meant); they do
// not wait for memory calls, nor memory calls for them. A tool named
// "memory", two tools of one name, and a name the API refuses (it takes
// 1 to 128 letters, digits, "_" and "-") are invalid: the SDK runner keeps
// one tool per name, so the first would take memory's calls. A call's
// input reaches the tool as the model wrote it, its numbers not rounded
// through a float64 as the SDK runner's decoding rounds them.
func WithTools(tools ...anthropic.BetaTool) Option {
	return func(cfg *config) { cfg.tools = append(cfg.tools, tools...) }
}

// apiToolName reports whether the API takes name as the name of a tool
// the client runs: ^[a-zA-Z0-9_-]{1,128}$. (A loop, not a regular
// expression compiled when the package loads: see
// TestOwnPackagesInitCheaply.)
func apiToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkTools reports the tools of WithTools that the runner cannot offer
// under their names.
func (cfg *config) checkTools() {
	seen := map[string]bool{ToolName: true}
	for _, tool := range cfg.tools {
		switch name := tool.Name(); {
		case name == ToolName:
			cfg.invalid("WithTools: a tool named %q would take the memory tool's calls", name)
		case seen[name]:
			cfg.invalid("WithTools: two tools are named %q", name)
		case !apiToolName(name):
			cfg.invalid("WithTools: the API refuses the tool name %q (1 to 128 letters, digits, _ and -)", name)
		default:
			seen[name] = true
		}
	}
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
	cfg.checkTools()
	return cfg
}
