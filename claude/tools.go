package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// DeclareTools returns params with each of tools declared as the SDK's
// tool runner declares a tool (name, description, input schema), after
// params' own tools, unless a tool of that name is already declared: for
// your own loop, with the tools that you give a runner with WithTools
// (package claude/workdir's, or an MCP server's). params is not modified.
func DeclareTools(params anthropic.BetaMessageNewParams, tools ...anthropic.BetaTool) anthropic.BetaMessageNewParams {
	for _, tool := range tools {
		if slices.ContainsFunc(params.Tools, func(t anthropic.BetaToolUnionParam) bool { return toolName(t) == tool.Name() }) {
			continue
		}
		params.Tools = append(slices.Clip(params.Tools), anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{
			Name:        tool.Name(),
			Description: anthropic.String(tool.Description()),
			InputSchema: tool.InputSchema(),
		}})
	}
	return params
}

// RunTools runs the calls of one assistant message to any of tools, one
// at a time in the order the model wrote them, and returns the
// tool_result blocks that answer them, in that order. A tool's error is
// answered as the SDK runner answers it: is_error set and the text
// "Error: " and the error. Calls to tools not among tools (memory's among
// them: Tool.BetaToolResults answers those) are left out, and so are
// calls before a "fallback" block, as the SDK runner does. An empty text
// block of a tool's answer (the SDK's read of an empty file) is left out,
// as the API refuses one. Once ctx has ended no further call is run: each
// is answered with ctx's error, is_error set.
func RunTools(ctx context.Context, msg *anthropic.BetaMessage, tools ...anthropic.BetaTool) []anthropic.BetaContentBlockParamUnion {
	var out []anthropic.BetaContentBlockParamUnion
	for _, block := range afterFallback(msg.Content) {
		i := slices.IndexFunc(tools, func(t anthropic.BetaTool) bool { return t.Name() == block.Name })
		if block.Type != "tool_use" || i < 0 {
			continue
		}
		result := anthropic.BetaToolResultBlockParam{ToolUseID: block.ID}
		// Once ctx has ended no call starts, as in the SDK runner: a
		// tool that does not look at ctx (the work directory's file
		// tools) would make its change after the caller gave up.
		err := ctx.Err()
		var input []byte
		if err == nil {
			input, err = json.Marshal(block.Input)
		}
		if err == nil {
			result.Content, err = tools[i].Execute(ctx, input)
			result.Content = withoutEmptyText(result.Content)
		}
		if err != nil {
			result = anthropic.NewBetaToolResultTextBlockParam(block.ID, fmt.Sprintf("Error: %v", err), true)
		}
		out = append(out, anthropic.BetaContentBlockParamUnion{OfToolResult: &result})
	}
	return out
}

// withoutEmptyText returns content without its empty text blocks, which
// the API refuses, in a tool_result too: a tool with nothing to say (a read
// of an empty file) would stop the run, every retry sending the same.
func withoutEmptyText(content []anthropic.BetaToolResultBlockParamContentUnion) []anthropic.BetaToolResultBlockParamContentUnion {
	if !slices.ContainsFunc(content, emptyText) {
		return content
	}
	return slices.DeleteFunc(slices.Clone(content), emptyText)
}

func emptyText(c anthropic.BetaToolResultBlockParamContentUnion) bool {
	return c.OfText != nil && c.OfText.Text == ""
}
