package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

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
// context edits appended to ContextManagement (unless the same edit is
// already there), their guidance appended to System (unless
// a text block with that text is already there), "memory" added to the
// ExcludeTools of every clear_tool_uses_20250919 edit, and every beta
// header that the request's features need added to Betas:
// context-management-2025-06-27 for clear_* edits, compact-2026-01-12 for a
// compact_20260112 edit, compact-2026-09-04 for Compaction. Preparing
// prepared params again changes nothing. Runner-only options (iterations,
// threads, tools, OnCall, timeouts, retries) are ignored, and so are
// invalid options' errors: check them with CheckOptions. params is not
// modified.
func PrepareParams(params anthropic.BetaMessageNewParams, opts ...Option) anthropic.BetaMessageNewParams {
	return prepare(params, newConfig(opts))
}

func prepare(params anthropic.BetaMessageNewParams, cfg *config) anthropic.BetaMessageNewParams {
	if !slices.ContainsFunc(params.Tools, func(t anthropic.BetaToolUnionParam) bool { return toolName(t) == ToolName }) {
		params.Tools = append(slices.Clip(params.Tools), BetaToolParam())
	}
	edits := slices.Clone(params.ContextManagement.Edits)
	for _, edit := range cfg.edits {
		if !slices.ContainsFunc(edits, func(e anthropic.BetaContextManagementConfigEditUnionParam) bool { return sameJSON(e, edit) }) {
			edits = append(edits, edit)
		}
	}
	for i, edit := range edits {
		if c := edit.OfClearToolUses20250919; c != nil && !slices.Contains(c.ExcludeTools, ToolName) {
			clone := *c
			clone.ExcludeTools = append([]string{ToolName}, c.ExcludeTools...)
			edits[i] = anthropic.BetaContextManagementConfigEditUnionParam{OfClearToolUses20250919: &clone}
		}
	}
	if len(edits) > 0 {
		params.ContextManagement.Edits = edits
	}
	for _, text := range cfg.guidance {
		if !slices.ContainsFunc(params.System, func(b anthropic.BetaTextBlockParam) bool { return b.Text == text }) {
			params.System = append(slices.Clip(params.System), anthropic.BetaTextBlockParam{Text: text})
		}
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

// sameJSON reports whether a and b are sent as the same JSON.
func sameJSON(a, b any) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// compactionBeta is a request middleware that adds the compact-2026-09-04
// beta to a request that asks for a compaction, as the runner's
// CompactBeforeNextTurn sends it.
func compactionBeta(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(body)
			body.Close()
			var top struct {
				Compaction json.RawMessage `json:"compaction"`
			}
			if json.Unmarshal(data, &top) == nil && len(top.Compaction) > 0 && !bytes.Equal(top.Compaction, []byte("null")) {
				beta := string(anthropic.AnthropicBetaCompact2026_09_04)
				if !slices.ContainsFunc(req.Header.Values("anthropic-beta"), func(v string) bool { return strings.Contains(v, beta) }) {
					req.Header.Add("anthropic-beta", beta)
				}
			}
		}
	}
	return next(req)
}

// failRequests is a request middleware that fails every request with err
// before it is sent.
func failRequests(err error) option.Middleware {
	return func(*http.Request, option.MiddlewareNext) (*http.Response, error) { return nil, err }
}

// toolName returns the name a tool declaration carries on the wire.
func toolName(t anthropic.BetaToolUnionParam) string {
	return declaredName(t.GetName(), t)
}

// declaredName returns name, or when it is unset the name that the tool
// declaration decl carries on the wire: server tools elide their constant
// name until marshaled.
func declaredName(name *string, decl any) string {
	if name != nil && *name != "" {
		return *name
	}
	data, err := json.Marshal(decl)
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
func runnerArgs(mem *memtool.Memory, params anthropic.BetaToolRunnerParams, opts []Option, lastMessage func() *anthropic.BetaMessage) ([]anthropic.BetaTool, anthropic.BetaToolRunnerParams, []option.RequestOption) {
	cfg := newConfig(opts)
	params.BetaMessageNewParams = prepare(params.BetaMessageNewParams, cfg)
	if cfg.maxIterations != 0 {
		params.MaxIterations = cfg.maxIterations
	}
	if cfg.threads != nil {
		params.DisableThread = !*cfg.threads
	}
	tool := NewTool(mem, &ToolOptions{OnCall: cfg.onCall, Turn: lastMessage})
	tools := append([]anthropic.BetaTool{tool}, cfg.tools...)
	reqOpts := append(slices.Clip(cfg.requestOpts), option.WithMiddleware(compactionBeta))
	if err := errors.Join(cfg.errs...); err != nil {
		reqOpts = append(reqOpts, option.WithMaxRetries(0), option.WithMiddleware(failRequests(err)))
	}
	return tools, params, reqOpts
}

// NewRunner returns the SDK's tool runner (client.Beta.Messages.NewToolRunner)
// with the memory tool declared and backed by mem, and params prepared as
// PrepareParams does. It sends nothing until you step it: RunToCompletion,
// NextMessage or All. Memory calls of one turn whose paths overlap run in
// the order the model wrote them (see the package doc, Concurrency).
func NewRunner(client *anthropic.Client, mem *memtool.Memory, params anthropic.BetaToolRunnerParams, opts ...Option) *anthropic.BetaToolRunner {
	var runner *anthropic.BetaToolRunner
	tools, params, reqOpts := runnerArgs(mem, params, opts, func() *anthropic.BetaMessage { return runner.LastMessage() })
	runner = client.Beta.Messages.NewToolRunner(tools, params, reqOpts...)
	return runner
}

// NewStreamingRunner is NewRunner for the SDK's streaming runner
// (client.Beta.Messages.NewToolRunnerStreaming).
func NewStreamingRunner(client *anthropic.Client, mem *memtool.Memory, params anthropic.BetaToolRunnerParams, opts ...Option) *anthropic.BetaToolRunnerStreaming {
	var runner *anthropic.BetaToolRunnerStreaming
	tools, params, reqOpts := runnerArgs(mem, params, opts, func() *anthropic.BetaMessage { return runner.LastMessage() })
	runner = client.Beta.Messages.NewToolRunnerStreaming(tools, params, reqOpts...)
	return runner
}

// Text returns the text blocks of an assistant message, joined with blank
// lines; "" for nil.
func Text(msg *anthropic.BetaMessage) string {
	if msg == nil {
		return ""
	}
	return joinTexts(msg.Content, func(b anthropic.BetaContentBlockUnion) (string, string) { return b.Type, b.Text })
}

// joinTexts joins the text of the text blocks among blocks with blank
// lines; kind returns a block's type and text.
func joinTexts[B any](blocks []B, kind func(B) (typ, text string)) string {
	var parts []string
	for _, block := range blocks {
		if typ, text := kind(block); typ == "text" && text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n\n")
}
