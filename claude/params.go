package claude

import (
	"bytes"
	"encoding/json"
	"slices"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

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
	// "memory" goes into the params' own edits first, so that one the
	// caller built as an option builds it compares equal to the option's.
	edits := slices.Clone(params.ContextManagement.Edits)
	for i, edit := range edits {
		if c := edit.OfClearToolUses20250919; c != nil && !slices.Contains(c.ExcludeTools, ToolName) {
			clone := *c
			clone.ExcludeTools = append([]string{ToolName}, c.ExcludeTools...)
			edits[i] = anthropic.BetaContextManagementConfigEditUnionParam{OfClearToolUses20250919: &clone}
		}
	}
	for _, edit := range cfg.edits {
		if !slices.ContainsFunc(edits, func(e anthropic.BetaContextManagementConfigEditUnionParam) bool { return sameJSON(e, edit) }) {
			edits = append(edits, edit)
		}
	}
	// Combined with other edits, clear_thinking_20251015 must come first
	// (the context-editing docs); the others keep their order.
	slices.SortStableFunc(edits, func(a, b anthropic.BetaContextManagementConfigEditUnionParam) int {
		return editRank(a) - editRank(b)
	})
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

// editRank orders clear_thinking_20251015 edits (0) before the others (1).
func editRank(e anthropic.BetaContextManagementConfigEditUnionParam) int {
	if e.OfClearThinking20251015 != nil {
		return 0
	}
	return 1
}
