package claudetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

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
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Text      *string         `json:"text"`
	Content   json.RawMessage `json:"content"` // a tool_result's
}

// emptyText reports whether b is a text block with no text, or a
// tool_result that holds one: the API refuses both.
func emptyText(b wireBlock) bool {
	if b.Type == "text" {
		return b.Text == nil || *b.Text == ""
	}
	if b.Type != "tool_result" {
		return false
	}
	var inner []wireBlock
	if json.Unmarshal(b.Content, &inner) != nil {
		return false // a string content, which may be empty
	}
	return slices.ContainsFunc(inner, emptyText)
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
	if p := checkTools(wr.Tools); p != "" {
		return p, ""
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
		other := false // a block that is not a tool_result has come
		for j, braw := range m.blocks() {
			var b wireBlock
			_ = json.Unmarshal(braw, &b)
			if emptyText(b) {
				return fmt.Sprintf("claudetest: messages[%d]: text content blocks must be non-empty", i)
			}
			switch b.Type {
			case "tool_use":
				uses = append(uses, b.ID)
			case "tool_result":
				if m.Role != "user" || !slices.Contains(pending, b.ToolUseID) {
					return fmt.Sprintf("claudetest: messages[%d]: tool_result for %q answers no tool_use of the previous message", i, b.ToolUseID)
				}
				if slices.Contains(answered, b.ToolUseID) {
					return fmt.Sprintf("claudetest: messages[%d].content[%d]: each tool_use must have a single result. Found multiple `tool_result` blocks with id: %s", i, j, b.ToolUseID)
				}
				if other {
					return fmt.Sprintf("claudetest: messages[%d].content[%d]: tool_result blocks must come first in the content, before any text", i, j)
				}
				answered = append(answered, b.ToolUseID)
			default:
				other = true
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

// customToolName reports whether the API takes name as the name of a
// tool the client runs: ^[a-zA-Z0-9_-]{1,128}$. The fake checks it on its
// own, not with package claude's check, which it is there to test.
func customToolName(name string) bool {
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

// checkTools refuses tool declarations that the API refuses: two tools of
// one name, a custom tool whose name breaks the API's pattern, or whose
// input_schema is not an object schema or has oneOf, allOf or anyOf at
// its top level.
func checkTools(tools json.RawMessage) string {
	var list []struct {
		Type        string                     `json:"type"`
		Name        string                     `json:"name"`
		InputSchema map[string]json.RawMessage `json:"input_schema"`
	}
	if len(tools) == 0 || string(tools) == "null" {
		return ""
	}
	if err := json.Unmarshal(tools, &list); err != nil {
		return "claudetest: tools: " + err.Error()
	}
	seen := map[string]bool{}
	for i, tool := range list {
		if tool.Name != "" && seen[tool.Name] {
			return "claudetest: tools: Tool names must be unique."
		}
		seen[tool.Name] = true
		if tool.Type != "" && tool.Type != "custom" {
			continue // a server tool, whose name is its type's
		}
		if !customToolName(tool.Name) {
			return fmt.Sprintf("claudetest: tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if string(tool.InputSchema["type"]) != `"object"` {
			return fmt.Sprintf("claudetest: tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
		for _, k := range []string{"oneOf", "allOf", "anyOf"} {
			if _, ok := tool.InputSchema[k]; ok {
				return fmt.Sprintf("claudetest: tools.%d.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level", i)
			}
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

// SameJSON reports whether two JSON texts hold the same value, whatever
// their key order and spacing: for comparing a Request's Body, Messages or
// ContextManagement with what a test expects. It fails when either is not
// JSON.
func SameJSON(got, want []byte) (bool, error) {
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return false, fmt.Errorf("claudetest: got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		return false, fmt.Errorf("claudetest: want is not JSON: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w), nil
}
