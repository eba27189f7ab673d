package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memtool/memtool"
)

// prepareRequest is the request middleware of the runners: it reads the
// request's body once, sends a turn's repeated tool results once
// (withoutRepeatedResults), and adds the compact-2026-09-04 beta to a
// request that asks for a compaction, as the runner's
// CompactBeforeNextTurn sends it.
func prepareRequest(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.GetBody == nil {
		return next(req)
	}
	body, err := req.GetBody()
	if err != nil {
		return next(req)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if fixed, ok := withoutRepeatedResults(data); ok {
		data = fixed
		req.Body = io.NopCloser(bytes.NewReader(fixed))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(fixed)), nil }
		req.ContentLength = int64(len(fixed))
	}
	if asksCompaction(data) {
		beta := string(anthropic.AnthropicBetaCompact2026_09_04)
		if !slices.ContainsFunc(req.Header.Values("anthropic-beta"), func(v string) bool { return strings.Contains(v, beta) }) {
			req.Header.Add("anthropic-beta", beta)
		}
	}
	return next(req)
}

// asksCompaction reports whether the request body data asks for a
// compaction (a compaction member that is not null); a body that does
// not name one is not decoded.
func asksCompaction(data []byte) bool {
	if !bytes.Contains(data, []byte(`"compaction"`)) {
		return false
	}
	var top struct {
		Compaction json.RawMessage `json:"compaction"`
	}
	return json.Unmarshal(data, &top) == nil && len(top.Compaction) > 0 && !bytes.Equal(top.Compaction, []byte("null"))
}

// withoutRepeatedResults returns the request body data without the user
// messages of tool results alone that repeat the message before them,
// and whether it left any out. The SDK's runner (v2.15.0) adds a turn's
// tool results again when a step whose request failed is run again, and
// the API refuses tool results that answer no tool call of the message
// before them. The memory tool and the tools of WithTools answer a call
// that already ran with its first answer, so when every call of the turn
// ran the first time (a request that failed on its own), the repeated
// message is the same to the byte and is left out. Messages that differ
// (a call cut off the first time by the end of the step's context ran on
// the second) are sent as they are, since only the SDK knows which came
// last; the API then refuses the request.
func withoutRepeatedResults(data []byte) ([]byte, bool) {
	if !repeatsAnID(data) {
		return nil, false
	}
	var top map[string]json.RawMessage
	var msgs []json.RawMessage
	if json.Unmarshal(data, &top) != nil || json.Unmarshal(top["messages"], &msgs) != nil {
		return nil, false
	}
	kept := msgs[:0:0]
	for i, raw := range msgs {
		if i > 0 && bytes.Equal(raw, msgs[i-1]) && toolResultsAlone(raw) {
			continue
		}
		kept = append(kept, raw)
	}
	if len(kept) == len(msgs) {
		return nil, false
	}
	top["messages"], _ = json.Marshal(kept)
	fixed, err := json.Marshal(top)
	return fixed, err == nil
}

// repeatsAnID reports whether a tool_use_id stands twice in the request
// body data, as the SDK writes it: without that no message repeats
// another, and the body is not decoded (a conversation of 100 turns is
// over 100 KB).
func repeatsAnID(data []byte) bool {
	key := []byte(`"tool_use_id":"`)
	seen := map[string]bool{}
	for rest := data; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return false
		}
		rest = rest[i+len(key):]
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			return false
		}
		if seen[string(rest[:j])] {
			return true
		}
		seen[string(rest[:j])] = true
		rest = rest[j:]
	}
}

// toolResultsAlone reports whether raw is a user message of tool results
// alone.
func toolResultsAlone(raw json.RawMessage) bool {
	var m struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Role != "user" || len(m.Content) == 0 {
		return false
	}
	for _, b := range m.Content {
		if b.Type != "tool_result" {
			return false
		}
	}
	return true
}

// failRequests is a request middleware that fails every request with err
// before it is sent.
func failRequests(err error) option.Middleware {
	return func(*http.Request, option.MiddlewareNext) (*http.Response, error) { return nil, err }
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
	tools := append([]anthropic.BetaTool{tool}, sequence(cfg.tools, lastMessage)...)
	reqOpts := append(slices.Clip(cfg.requestOpts), option.WithMiddleware(prepareRequest))
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
