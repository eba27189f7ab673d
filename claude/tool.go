package claude

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/memtool/memtool"
)

// ToolName is the name the model calls the memory tool by.
const ToolName = "memory"

// BetaToolParam returns the memory tool's declaration for the beta Messages
// API: {"type":"memory_20250818","name":"memory"}. The model knows the
// commands; no schema is sent.
func BetaToolParam() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// ToolParam returns the memory tool's declaration for the GA Messages API.
func ToolParam() anthropic.ToolUnionParam {
	return anthropic.ToolUnionParam{OfMemoryTool20250818: &anthropic.MemoryTool20250818Param{}}
}

// A Call is one memory command that a Tool ran.
type Call struct {
	// ID is the tool_use block's id. The SDK's tool runner does not pass
	// it to the tool; a Tool that follows the runner's turn (ToolOptions.Turn)
	// finds it from the call's input, and leaves it "" when the turn has
	// several calls with the same input or the call is not in the turn.
	ID string
	// Input is the tool input as the model sent it.
	Input json.RawMessage
	// Command is the parsed command; nil when Input did not parse.
	Command memtool.Command
	// Result is what the model receives.
	Result memtool.Result
}

// Summary describes the call on one short line, for logs and terminals:
// "create /memories/notes.md: ok", "view /memories/x.md: error: The path
// /memories/x.md does not exist. Please provide a valid path." Paths and
// error texts that hold control characters are quoted, so the model cannot
// write terminal escapes through it.
func (c Call) Summary() string {
	var what string
	switch cmd := c.Command.(type) {
	case nil:
		what = "invalid input"
	case *memtool.Rename:
		what = "rename " + printable(cmd.OldPath) + " -> " + printable(cmd.NewPath)
	default:
		what = cmd.Name() + " " + printable(cmd.Target())
	}
	switch r := c.Result; {
	case r.IsError:
		return what + ": error: " + firstLine(strings.TrimPrefix(r.Text, "Error: "), 160)
	case r.Image != nil:
		return fmt.Sprintf("%s: %s image, %d bytes", what, r.Image.MediaType, len(r.Image.Data))
	}
	return what + ": ok"
}

// printable returns s, or s quoted when it holds anything but printable
// characters and spaces.
func printable(s string) string {
	for _, r := range s {
		if r != ' ' && !unicode.IsPrint(r) {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// firstLine returns the first line of s, at most max characters, with
// anything unprintable replaced by '?'; "…" marks a cut.
func firstLine(s string, max int) string {
	line, rest, cut := strings.Cut(s, "\n")
	cut = cut && strings.TrimSpace(rest) != ""
	if utf8.RuneCountInString(line) > max {
		line = string([]rune(line)[:max])
		cut = true
	}
	line = strings.Map(func(r rune) rune {
		if r != ' ' && !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, line)
	if cut {
		line += "…"
	}
	return line
}

// ToolOptions configure a Tool. The zero value (or nil) means the defaults.
type ToolOptions struct {
	// OnCall, if set, is called after each command with what ran and what
	// the model receives. It is called from several goroutines at once when
	// a turn has several calls, and a slow OnCall slows the turn.
	OnCall func(ctx context.Context, c Call)
	// Turn, if set, returns the assistant message whose calls the SDK's
	// tool runner is running: pass the runner's LastMessage, as NewRunner
	// and NewStreamingRunner do. Execute then runs the calls of that
	// message in the order the model wrote them wherever their paths
	// overlap. Without it, Execute runs each call as it comes.
	Turn func() *anthropic.BetaMessage
}

// A Tool runs the memory tool's commands on a memtool.Memory. It is an
// anthropic.BetaTool for the SDK's tool runner, and it answers the tool_use
// blocks of your own loop (BetaToolResults, ToolResults). It is safe for
// concurrent use.
type Tool struct {
	mem    *memtool.Memory
	onCall func(context.Context, Call)
	follow follower // the runner's turns (ToolOptions.Turn)
}

var _ anthropic.BetaTool = (*Tool)(nil)

// NewTool returns a Tool over mem. opts may be nil.
func NewTool(mem *memtool.Memory, opts *ToolOptions) *Tool {
	t := &Tool{mem: mem}
	t.follow.build = func(msg *anthropic.BetaMessage) *turn { return runnerTurn(msg, mem.Store()) }
	if opts != nil {
		t.onCall = opts.OnCall
		t.follow.lastMessage = opts.Turn
	}
	return t
}

// Memory returns the Memory the tool runs on.
func (t *Tool) Memory() *memtool.Memory { return t.mem }

// Run runs one tool input and returns what the model receives. id is the
// tool_use id, passed on to OnCall.
func (t *Tool) Run(ctx context.Context, id string, input json.RawMessage) memtool.Result {
	call := Call{ID: id, Input: input}
	if cmd, err := memtool.ParseCommand(input); err == nil {
		call.Command = cmd
		call.Result = t.mem.Execute(ctx, cmd)
	} else {
		call.Result = t.mem.Run(ctx, input) // the parse error, as the model should read it
	}
	if t.onCall != nil {
		t.onCall(ctx, call)
	}
	return call.Result
}

// Name returns "memory".
func (t *Tool) Name() string { return ToolName }

// Description describes the tool. The SDK runner sends it only when the
// memory tool is not already declared in the request's tools, which
// NewRunner always does.
func (t *Tool) Description() string {
	return "Persistent memory under the virtual directory /memories: view a file or directory, " +
		"create a file, str_replace, insert, delete, rename. Files survive across conversations."
}

// InputSchema describes the commands' JSON, for the case where the tool is
// declared as a custom tool rather than as memory_20250818.
func (t *Tool) InputSchema() anthropic.BetaToolInputSchemaParam {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"command":     map[string]any{"type": "string", "enum": []string{"view", "create", "str_replace", "insert", "delete", "rename"}},
			"path":        str("a path under /memories"),
			"view_range":  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "[start_line, end_line], 1-based; end_line -1 reads to the end"},
			"file_text":   str("create: the whole content of the new file"),
			"old_str":     str("str_replace: the text to replace, which must occur exactly once"),
			"new_str":     str("str_replace: the replacement (omitted: delete old_str)"),
			"insert_line": map[string]any{"type": "integer", "description": "insert: the line after which to insert (0: before the first line)"},
			"insert_text": str("insert: the text to insert"),
			"old_path":    str("rename: the path to move"),
			"new_path":    str("rename: where to move it (never overwrites)"),
		},
		Required: []string{"command"},
	}
}

// Execute runs one tool input for the SDK's tool runner. A failed command
// returns a *CommandError: the runner sends "Error: " + its message with
// is_error set, which is exactly memtool's text. With ToolOptions.Turn set,
// a call waits until the earlier calls of its turn that touch overlapping
// paths have run (see the package doc, Concurrency).
func (t *Tool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	var r memtool.Result
	if tr, i := t.follow.claim(canonical(input)); tr != nil {
		id := ""
		if tr.calls[i].unique {
			id = tr.calls[i].id
		}
		r = tr.run(ctx, t, i, id)
	} else {
		r = t.Run(ctx, "", input)
	}
	if r.IsError {
		return nil, &CommandError{Result: r}
	}
	return BetaResultContent(r), nil
}

// A CommandError is a failed memory command, as Tool.Execute returns it.
type CommandError struct {
	Result memtool.Result
}

// Error returns the failure text without its "Error: " prefix, which the
// SDK runner adds back.
func (e *CommandError) Error() string { return strings.TrimPrefix(e.Result.Text, "Error: ") }

// BetaResultContent returns a result as tool_result content for the beta
// API: one text block, or one image block.
func BetaResultContent(r memtool.Result) []anthropic.BetaToolResultBlockParamContentUnion {
	if r.Image == nil {
		return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: r.Text}}}
	}
	source := &anthropic.BetaBase64ImageSourceParam{MediaType: anthropic.BetaBase64ImageSourceMediaType(r.Image.MediaType), Data: imageData(r)}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfImage: &anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{OfBase64: source}}}}
}

// BetaResultBlock returns the beta tool_result block that answers the
// tool_use block id with r; is_error is set only on failure.
func BetaResultBlock(id string, r memtool.Result) anthropic.BetaToolResultBlockParam {
	return anthropic.BetaToolResultBlockParam{ToolUseID: id, Content: BetaResultContent(r), IsError: isError(r)}
}

// ResultBlock is BetaResultBlock for the GA API.
func ResultBlock(id string, r memtool.Result) anthropic.ToolResultBlockParam {
	return anthropic.ToolResultBlockParam{ToolUseID: id, Content: ResultContent(r), IsError: isError(r)}
}

// ResultContent is BetaResultContent for the GA API.
func ResultContent(r memtool.Result) []anthropic.ToolResultBlockParamContentUnion {
	if r.Image == nil {
		return []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Text}}}
	}
	source := &anthropic.Base64ImageSourceParam{MediaType: anthropic.Base64ImageSourceMediaType(r.Image.MediaType), Data: imageData(r)}
	return []anthropic.ToolResultBlockParamContentUnion{{OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: source}}}}
}

// imageData is an image result's bytes in base64, as content blocks carry them.
func imageData(r memtool.Result) string { return base64.StdEncoding.EncodeToString(r.Image.Data) }

// isError is a tool_result's is_error: set, to true, only on failure, so
// that a success sends no is_error at all.
func isError(r memtool.Result) param.Opt[bool] {
	if r.IsError {
		return anthropic.Bool(true)
	}
	return param.Opt[bool]{}
}

// BetaToolResults runs the memory calls of one assistant message and
// returns the tool_result blocks that answer them, one per memory tool_use
// block, in the order of the blocks. Put them first in the next user
// message, with the results of any other tools; other tools' calls are left
// to you. As the SDK runner does, calls that come before a "fallback" block
// are not answered. Call it when msg.StopReason is "tool_use".
func (t *Tool) BetaToolResults(ctx context.Context, msg *anthropic.BetaMessage) []anthropic.BetaContentBlockParamUnion {
	var calls []pendingCall
	for _, block := range betaMemoryCalls(msg) {
		calls = append(calls, pendingCall{id: block.ID, input: block.Input})
	}
	return answerTurn(ctx, t, calls, func(id string, r memtool.Result) anthropic.BetaContentBlockParamUnion {
		b := BetaResultBlock(id, r)
		return anthropic.BetaContentBlockParamUnion{OfToolResult: &b}
	})
}

// ToolResults is BetaToolResults for the GA API's messages.
func (t *Tool) ToolResults(ctx context.Context, msg *anthropic.Message) []anthropic.ContentBlockParamUnion {
	var calls []pendingCall
	for _, block := range msg.Content {
		if block.Type == "tool_use" && block.Name == ToolName {
			calls = append(calls, pendingCall{id: block.ID, input: block.Input})
		}
	}
	return answerTurn(ctx, t, calls, func(id string, r memtool.Result) anthropic.ContentBlockParamUnion {
		b := ResultBlock(id, r)
		return anthropic.ContentBlockParamUnion{OfToolResult: &b}
	})
}

// answerTurn runs the calls of one turn and returns their results, each
// made a content block by block; nil when there are no calls.
func answerTurn[B any](ctx context.Context, t *Tool, calls []pendingCall, block func(id string, r memtool.Result) B) []B {
	results := t.runTurn(ctx, calls)
	if len(results) == 0 {
		return nil
	}
	out := make([]B, len(results))
	for i, r := range results {
		out[i] = block(calls[i].id, r)
	}
	return out
}
