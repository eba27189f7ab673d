package claude

import (
	"errors"
	"slices"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// PrepareMessageParams is PrepareParams for the GA Messages API
// (client.Messages.New, with your own loop): it returns params with the
// memory tool declared (ToolParam), unless a tool named "memory" already
// is, and the options' guidance (WithOrganizedMemory, WithTopic,
// WithGuidance) appended to System unless a text block with that text is
// already there, so preparing twice changes nothing. Context editing and
// compaction exist only in the beta API: an option that asks for them is
// an error here, as is an invalid option. Runner-only options are ignored.
// params is not modified.
func PrepareMessageParams(params anthropic.MessageNewParams, opts ...Option) (anthropic.MessageNewParams, error) {
	cfg := newConfig(opts)
	if err := errors.Join(cfg.errs...); err != nil {
		return params, err
	}
	if len(cfg.edits) > 0 || len(cfg.betas) > 0 {
		return params, errors.New("claude: context editing and compaction need the beta Messages API (client.Beta.Messages, PrepareParams)")
	}
	if !slices.ContainsFunc(params.Tools, func(t anthropic.ToolUnionParam) bool { return gaToolName(t) == ToolName }) {
		params.Tools = append(slices.Clip(params.Tools), ToolParam())
	}
	for _, text := range cfg.guidance {
		if !slices.ContainsFunc(params.System, func(b anthropic.TextBlockParam) bool { return b.Text == text }) {
			params.System = append(slices.Clip(params.System), anthropic.TextBlockParam{Text: text})
		}
	}
	return params, nil
}

// gaToolName returns the name a GA tool declaration carries on the wire.
func gaToolName(t anthropic.ToolUnionParam) string {
	return declaredName(t.GetName(), t)
}

// MessageText is Text for a GA message: its text blocks, joined with blank
// lines; "" for nil.
func MessageText(msg *anthropic.Message) string {
	if msg == nil {
		return ""
	}
	return joinTexts(msg.Content, func(b anthropic.ContentBlockUnion) (string, string) { return b.Type, b.Text })
}
