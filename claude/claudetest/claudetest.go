// Package claudetest is a fake of the Anthropic Messages API for tests: a
// local HTTP server that answers POST /v1/messages from a script, in the
// real wire format (JSON, or server-sent events when the request streams),
// and records every request it received.
//
// It checks requests as the API does where a memory-tool agent can get them
// wrong, and answers 400 invalid_request_error when they are wrong: every
// tool_use must be answered by a tool_result in the next user message,
// every called tool must be declared, context-management edits need their
// beta headers, and message threads work as the API's do (a request that
// continues a thread sends only its new messages; Request.Messages has the
// whole conversation).
//
// Point the real SDK client at it with Server.Client, or with
// ANTHROPIC_BASE_URL for a program under test.
package claudetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// A Turn is one scripted reply.
type Turn struct {
	// Text, if set, is a text block ahead of the tool calls.
	Text string
	// Calls are the tool_use blocks, in order.
	Calls []ToolUse
	// StopReason defaults to "tool_use" when there are calls, else "end_turn".
	StopReason string
	// Error, if set, is answered instead of a message.
	Error *Error
	// Hang holds the request until the client gives up on it. A streaming
	// request first gets message_start and Text. The server's Hung channel
	// receives when such a request has arrived.
	Hang bool
	// Compaction, if set, answers a compaction request (one with a
	// top-level "compaction") with a compaction block holding this
	// summary. Only non-streaming requests get it; a streaming one is
	// refused.
	Compaction string
}

// A ToolUse is one tool_use block of a Turn.
type ToolUse struct {
	ID    string // default "toolu_<turn>_<n>"
	Name  string // default "memory"
	Input string // the input JSON
}

// An Error is an API error reply.
type Error struct {
	Status  int    // HTTP status; default 400
	Type    string // default "invalid_request_error"
	Message string
	Code    string // error.details.error_code, if any
}

// A Request is one request as the server received it.
type Request struct {
	Header http.Header
	Body   []byte // exactly as received
	Stream bool
	// Thread is "create", "continue" or "".
	Thread string
	// Messages is the whole conversation the request stands for: on a
	// request that continues a thread, the thread's messages and then the
	// new ones.
	Messages []json.RawMessage
	// System and Tools are those of the request, or of the thread it continues.
	System, Tools json.RawMessage
	// ContextManagement is the request's context_management, if any.
	ContextManagement json.RawMessage
	// Betas are the anthropic-beta header's values.
	Betas []string
	// Problem is why the server refused the request; "" if it did not.
	Problem string
}

// A ToolResult is one tool_result block as the client sent it.
type ToolResult struct {
	Raw       json.RawMessage // the block's JSON, exactly as sent
	ToolUseID string
	IsError   bool
	Content   []json.RawMessage // the content blocks
	Text      string            // the text blocks' text, joined
}

// ToolResults returns the tool_result blocks of the request's last message.
func (r *Request) ToolResults() []ToolResult {
	if len(r.Messages) == 0 {
		return nil
	}
	var msg wireMessage
	if json.Unmarshal(r.Messages[len(r.Messages)-1], &msg) != nil {
		return nil
	}
	var out []ToolResult
	for _, raw := range msg.blocks() {
		var b struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "tool_result" {
			continue
		}
		tr := ToolResult{Raw: raw, ToolUseID: b.ToolUseID, IsError: b.IsError}
		var s string
		if json.Unmarshal(b.Content, &s) == nil {
			tr.Text = s
		} else {
			_ = json.Unmarshal(b.Content, &tr.Content)
			var texts []string
			for _, c := range tr.Content {
				var tb struct{ Type, Text string }
				if json.Unmarshal(c, &tb) == nil && tb.Type == "text" {
					texts = append(texts, tb.Text)
				}
			}
			tr.Text = strings.Join(texts, "")
		}
		out = append(out, tr)
	}
	return out
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	URL string
	srv *httptest.Server

	hung chan struct{}

	mu      sync.Mutex
	script  []Turn
	next    int
	reqs    []*Request
	threads map[string]threadState // by the id of the reply a thread ends with
}

type threadState struct {
	messages      []json.RawMessage
	system, tools json.RawMessage
}

// NewServer starts a fake that answers the n-th request with turns[n], and
// any request past the script with an error.
func NewServer(turns ...Turn) *Server {
	s := &Server{script: turns, threads: map[string]threadState{}, hung: make(chan struct{}, 64)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Hung receives once for each request that a Hang turn holds.
func (s *Server) Hung() <-chan struct{} { return s.hung }

// Requests returns copies of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// Client returns a real SDK client that talks to the server: no retries,
// nothing read from the environment. opts come last.
func (s *Server) Client(opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(s.URL),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(s.srv.Client()),
		option.WithMaxRetries(0),
	}, opts...)...)
}

type wireRequest struct {
	Model             string            `json:"model"`
	MaxTokens         int64             `json:"max_tokens"`
	Messages          []json.RawMessage `json:"messages"`
	System            json.RawMessage   `json:"system"`
	Tools             json.RawMessage   `json:"tools"`
	Stream            bool              `json:"stream"`
	ContextManagement json.RawMessage   `json:"context_management"`
	Compaction        json.RawMessage   `json:"compaction"`
	Thread            *struct {
		Type              string `json:"type"`
		PreviousMessageID string `json:"previous_message_id"`
	} `json:"thread"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocks returns the message's content blocks; a string content is one
// text block.
func (m wireMessage) blocks() []json.RawMessage {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{b}
	}
	var blocks []json.RawMessage
	_ = json.Unmarshal(m.Content, &blocks)
	return blocks
}

type wireBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ToolUseID string `json:"tool_use_id"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &Request{Header: r.Header.Clone(), Body: body}
	for _, v := range r.Header.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				req.Betas = append(req.Betas, b)
			}
		}
	}

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := s.next
	s.next++
	var turn Turn
	if n < len(s.script) {
		turn = s.script[n]
	}
	problem, code := s.check(r, req, body)
	req.Problem = problem
	s.mu.Unlock()

	switch {
	case problem != "":
		writeError(w, &Error{Message: problem, Code: code})
		return
	case n >= len(s.script):
		msg := fmt.Sprintf("claudetest: request %d is past the end of the script (%d turns)", n+1, len(s.script))
		s.mu.Lock()
		req.Problem = msg
		s.mu.Unlock()
		writeError(w, &Error{Message: msg})
		return
	case turn.Error != nil:
		writeError(w, turn.Error)
		return
	}

	id := fmt.Sprintf("msg_%02d", n+1)
	var wr wireRequest
	_ = json.Unmarshal(body, &wr)
	content := turn.content(n + 1)
	if turn.Compaction != "" && wr.Stream {
		msg := "claudetest: a Compaction turn is answered only without streaming"
		s.mu.Lock()
		req.Problem = msg
		s.mu.Unlock()
		writeError(w, &Error{Message: msg})
		return
	}
	declared := toolNames(req.Tools)
	for _, c := range turn.Calls {
		if !slices.Contains(declared, c.name()) {
			s.mu.Lock()
			req.Problem = fmt.Sprintf("claudetest: the script calls tool %q, which the request does not declare (tools: %v)", c.name(), declared)
			s.mu.Unlock()
			writeError(w, &Error{Message: req.Problem})
			return
		}
	}
	stop := turn.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(turn.Calls) > 0 {
			stop = "tool_use"
		}
	}

	if !turn.Hang {
		s.mu.Lock()
		reply, _ := json.Marshal(map[string]any{"role": "assistant", "content": content})
		s.threads[id] = threadState{messages: append(slices.Clone(req.Messages), reply), system: req.System, tools: req.Tools}
		s.mu.Unlock()
	}

	w.Header().Set("request-id", fmt.Sprintf("req_%02d", n+1))
	if !wr.Stream {
		if turn.Hang {
			s.hung <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(message(id, wr.Model, content, stop))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	streamMessage(w, id, wr.Model, content, stop, turn.Hang, func() {
		s.hung <- struct{}{}
		<-r.Context().Done()
	})
}

// check refuses what the API would refuse, and records the request's view
// of the conversation. s.mu is held.
func (s *Server) check(r *http.Request, req *Request, body []byte) (problem, code string) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return fmt.Sprintf("claudetest: unexpected %s %s", r.Method, r.URL.Path), ""
	}
	if r.Header.Get("Authorization") == "" && r.Header.Get("X-Api-Key") == "" {
		return "claudetest: no credentials", ""
	}
	if r.Header.Get("Anthropic-Version") == "" {
		return "claudetest: no anthropic-version header", ""
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return "claudetest: body is not JSON: " + err.Error(), ""
	}
	req.Stream = wr.Stream
	req.ContextManagement = wr.ContextManagement
	if wr.Model == "" || wr.MaxTokens <= 0 || len(wr.Messages) == 0 {
		return "claudetest: model, max_tokens and messages are required", ""
	}
	req.Messages, req.System, req.Tools = wr.Messages, wr.System, wr.Tools
	if wr.Thread != nil {
		req.Thread = wr.Thread.Type
		if !slices.Contains(req.Betas, string(anthropic.AnthropicBetaMessageThreads2026_08_12)) {
			return "claudetest: thread needs the message-threads-2026-08-12 beta", ""
		}
		if wr.Thread.Type == "continue" {
			prev, ok := s.threads[wr.Thread.PreviousMessageID]
			if !ok {
				return "claudetest: no thread ends with " + wr.Thread.PreviousMessageID, "thread_not_found"
			}
			if len(wr.System) > 0 || len(wr.Tools) > 0 {
				return "claudetest: a request that continues a thread cannot set system or tools", ""
			}
			req.Messages = append(slices.Clone(prev.messages), wr.Messages...)
			req.System, req.Tools = prev.system, prev.tools
		}
	}
	if p := checkBetas(req); p != "" {
		return p, ""
	}
	if len(wr.Compaction) > 0 && string(wr.Compaction) != "null" {
		if !slices.Contains(req.Betas, string(anthropic.AnthropicBetaCompact2026_09_04)) {
			return "claudetest: compaction needs the compact-2026-09-04 beta", ""
		}
		if len(wr.ContextManagement) > 0 && string(wr.ContextManagement) != "null" {
			return "claudetest: a compaction request cannot carry context_management", ""
		}
	}
	return checkConversation(req.Messages), ""
}

// checkBetas refuses context-management edits sent without their beta.
func checkBetas(req *Request) string {
	if len(req.ContextManagement) == 0 {
		return ""
	}
	var cm struct {
		Edits []struct {
			Type string `json:"type"`
		} `json:"edits"`
	}
	if err := json.Unmarshal(req.ContextManagement, &cm); err != nil {
		return "claudetest: context_management: " + err.Error()
	}
	for _, e := range cm.Edits {
		var beta anthropic.AnthropicBeta
		switch e.Type {
		case "clear_tool_uses_20250919", "clear_thinking_20251015":
			beta = anthropic.AnthropicBetaContextManagement2025_06_27
		case "compact_20260112":
			beta = anthropic.AnthropicBetaCompact2026_01_12
		default:
			return "claudetest: unknown context edit " + e.Type
		}
		if !slices.Contains(req.Betas, string(beta)) {
			return fmt.Sprintf("claudetest: context edit %s needs the %s beta", e.Type, beta)
		}
	}
	return ""
}

// checkConversation refuses a conversation whose tool calls and results do
// not pair up as the API requires.
func checkConversation(msgs []json.RawMessage) string {
	var pending []string // tool_use ids of the previous assistant message
	for i, raw := range msgs {
		var m wireMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Sprintf("claudetest: messages[%d]: %v", i, err)
		}
		var answered []string
		var uses []string
		for _, braw := range m.blocks() {
			var b wireBlock
			_ = json.Unmarshal(braw, &b)
			switch b.Type {
			case "tool_use":
				uses = append(uses, b.ID)
			case "tool_result":
				if m.Role != "user" || !slices.Contains(pending, b.ToolUseID) {
					return fmt.Sprintf("claudetest: messages[%d]: tool_result for %q answers no tool_use of the previous message", i, b.ToolUseID)
				}
				answered = append(answered, b.ToolUseID)
			}
		}
		for _, id := range pending {
			if !slices.Contains(answered, id) {
				return fmt.Sprintf("claudetest: messages[%d]: tool_use ids were found without tool_result blocks immediately after: %s", i, id)
			}
		}
		pending = nil
		if m.Role == "assistant" {
			pending = uses
		}
	}
	if len(pending) > 0 {
		return "claudetest: the conversation ends with unanswered tool_use blocks"
	}
	if n := len(msgs); n > 0 {
		var last wireMessage
		_ = json.Unmarshal(msgs[n-1], &last)
		if last.Role != "user" {
			return "claudetest: the last message must be the user's"
		}
	}
	return ""
}

func toolNames(tools json.RawMessage) []string {
	var list []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(tools, &list)
	var names []string
	for _, t := range list {
		names = append(names, t.Name)
	}
	return names
}

func (c ToolUse) name() string {
	if c.Name == "" {
		return "memory"
	}
	return c.Name
}

// content returns the turn's content blocks; turnNo numbers default ids.
func (t Turn) content(turnNo int) []map[string]any {
	var blocks []map[string]any
	if t.Compaction != "" {
		blocks = append(blocks, map[string]any{"type": "compaction", "content": t.Compaction})
	}
	if t.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.Calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%02d_%d", turnNo, i+1)
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": id, "name": c.name(), "input": json.RawMessage(c.Input)})
	}
	return blocks
}

func message(id, model string, content []map[string]any, stop string) map[string]any {
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 20},
	}
}

// streamMessage writes the reply as the API streams it: message_start, each
// block as start, deltas (split in two, to exercise accumulation) and stop,
// then message_delta and message_stop. With hang it stops after the text
// block's first delta and calls wait.
func streamMessage(w http.ResponseWriter, id, model string, content []map[string]any, stop string, hang bool, wait func()) {
	flusher, _ := w.(http.Flusher)
	event := func(v map[string]any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := message(id, model, []map[string]any{}, "")
	start["stop_reason"] = nil
	event(map[string]any{"type": "message_start", "message": start})
	for i, block := range content {
		switch block["type"] {
		case "text":
			text := block["text"].(string)
			event(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			a, b := halves(text)
			event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": a}})
			if hang {
				wait()
				return
			}
			if b != "" {
				event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b}})
			}
		case "tool_use":
			event(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			var compact bytes.Buffer
			_ = json.Compact(&compact, block["input"].(json.RawMessage))
			a, b := halves(compact.String())
			for _, part := range []string{a, b} {
				if part != "" {
					event(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
				}
			}
		}
		event(map[string]any{"type": "content_block_stop", "index": i})
	}
	if hang {
		wait()
		return
	}
	event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	event(map[string]any{"type": "message_stop"})
}

// halves splits s in two at a character boundary.
func halves(s string) (string, string) {
	r := []rune(s)
	return string(r[:len(r)/2]), string(r[len(r)/2:])
}

func writeError(w http.ResponseWriter, e *Error) {
	status, typ := e.Status, e.Type
	if status == 0 {
		status = http.StatusBadRequest
	}
	if typ == "" {
		typ = "invalid_request_error"
	}
	body := map[string]any{"type": typ, "message": e.Message}
	if e.Code != "" {
		body["details"] = map[string]string{"error_code": e.Code}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": body})
}
