package claude

import (
	"context"
	"encoding/json"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// The tools given with WithTools (a work directory's, MCP servers') know
// nothing of paths memtool can compare, so their calls of one turn run one
// at a time, in the order the model wrote them: a write and then an edit of
// the same file in one turn work as meant. They do not wait for memory
// calls, nor memory calls for them. A call whose tool the caller took away
// or replaced after the runner returned its message never reaches the
// wrapper; the calls after it run once the turn has stalled (see
// turn.stalled).

// sequenced is a tool of WithTools whose calls follow the runner's turns.
type sequenced struct {
	anthropic.BetaTool
	follow *follower
}

// sequence wraps tools so that their calls of one turn of the runner (whose
// last message lastMessage returns) run one at a time in the model's order.
func sequence(tools []anthropic.BetaTool, lastMessage func() *anthropic.BetaMessage) []anthropic.BetaTool {
	if len(tools) == 0 {
		return nil
	}
	names := make(map[string]bool, len(tools))
	for _, t := range tools {
		names[t.Name()] = true
	}
	f := &follower{lastMessage: lastMessage, build: func(msg *anthropic.BetaMessage) *turn { return serialTurn(msg, names) }}
	out := make([]anthropic.BetaTool, len(tools))
	for i, t := range tools {
		out[i] = sequenced{t, f}
	}
	return out
}

// Execute runs the call once the earlier calls of its turn to the
// sequenced tools have run. If ctx ends first, the call is not run. A call
// that started in an earlier pass over the turn (a step the runner
// retried) answers as it did then, an error too: one that ctx caused may
// have come after the tool made its change (an MCP server's answer lost),
// which must not be made again. An empty text block of the answer is left
// out (see withoutEmptyText).
func (s sequenced) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	tr, i := s.follow.claim(callKey(s.Name(), input))
	if tr == nil {
		content, err := s.BetaTool.Execute(ctx, input)
		return withoutEmptyText(content), err
	}
	if answer, ok := tr.answered(i).(toolAnswer); ok {
		return answer.content, answer.err
	}
	var keep any
	defer func() { tr.finish(i, keep) }()
	tr.wait(ctx, i)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	content, err := s.BetaTool.Execute(ctx, modelInput(tr.calls[i].raw, input))
	content = withoutEmptyText(content)
	keep = toolAnswer{content, err}
	return content, err
}

// modelInput is the input to give a tool for a call that the runner
// passes as input: the block's input as the model sent it (raw), when it
// means what input means. The runner decodes a call's input into Go
// values and encodes it again, so every number has been through a
// float64: an integer past 2^53 (a 64-bit id an MCP tool takes) came out
// another integer. raw is not used when it means something else than
// input in more than such numbers (a key given twice, whose first value
// the runner keeps): the tool then runs what the runner asked.
func modelInput(raw, input json.RawMessage) json.RawMessage {
	if raw == nil || string(canonical(raw)) != string(canonical(input)) {
		return input
	}
	return raw
}

// toolAnswer is what a call to a tool of WithTools answered.
type toolAnswer struct {
	content []anthropic.BetaToolResultBlockParamContentUnion
	err     error
}

// serialTurn is the turn of msg's calls to the named tools, each following
// the one before it.
func serialTurn(msg *anthropic.BetaMessage, names map[string]bool) *turn {
	tr := &turn{broken: make(chan struct{})}
	for _, block := range afterFallback(msg.Content) {
		if block.Type != "tool_use" || !names[block.Name] {
			continue
		}
		c := turnCall{id: block.ID, input: callKey(block.Name, runnerInput(block)), done: make(chan struct{}), unique: true, raw: block.Input}
		if n := len(tr.calls); n > 0 {
			c.before = []int{n - 1}
		}
		tr.calls = append(tr.calls, c)
	}
	// Calls that the runner passes one input but that the model wrote
	// differently (ids that round to one float64) cannot be told apart
	// when they arrive: either may take the other's place, and so the
	// other's answer. Each then runs the runner's input, as it would
	// without a turn to follow.
	for i := range tr.calls {
		for j := range i {
			if string(tr.calls[i].input) == string(tr.calls[j].input) && string(tr.calls[i].raw) != string(tr.calls[j].raw) {
				tr.calls[i].raw, tr.calls[j].raw = nil, nil
			}
		}
	}
	return tr
}

// callKey identifies a call by its tool and its input in canonical form.
func callKey(name string, input json.RawMessage) json.RawMessage {
	return append(append([]byte(name), 0), canonical(input)...)
}
