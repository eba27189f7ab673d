package claudetest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

const memoryTools = `[{"name":"memory","type":"memory_20250818"}]`

func post(t *testing.T, srv *claudetest.Server, betas, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Anthropic-Version", "2026-10-21")
	if betas != "" {
		req.Header.Set("Anthropic-Beta", betas)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// The fake refuses what the API refuses, so tests built on it can fail.
func TestRefusals(t *testing.T) {
	user := `{"role":"user","content":"hi"}`
	callTurn := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"memory","input":{"command":"view","path":"/memories"}}]}`
	answer := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`
	for _, tc := range []struct {
		name, betas, body, want string
	}{
		{"unanswered tool_use", "", `{"model":"m","max_tokens":10,"tools":` + memoryTools + `,"messages":[` + user + `,` + callTurn + `,` + user + `]}`, "without tool_result"},
		{"stray tool_result", "", `{"model":"m","max_tokens":10,"messages":[` + user + `,{"role":"assistant","content":"x"},` + answer + `]}`, "answers no tool_use"},
		{"context edit without beta", "", `{"model":"m","max_tokens":10,"messages":[` + user + `],"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`, "needs the context-management-2025-06-27 beta"},
		{"compact edit without beta", "context-management-2025-06-27", `{"model":"m","max_tokens":10,"messages":[` + user + `],"context_management":{"edits":[{"type":"compact_20260112"}]}}`, "needs the compact-2026-01-12 beta"},
		{"unknown thread", "message-threads-2026-08-12", `{"model":"m","max_tokens":10,"messages":[` + user + `],"thread":{"type":"continue","previous_message_id":"msg_x"}}`, "thread_not_found"},
		{"thread without beta", "", `{"model":"m","max_tokens":10,"messages":[` + user + `],"thread":{"type":"create"}}`, "message-threads-2026-08-12 beta"},
		{"undeclared tool", "", `{"model":"m","max_tokens":10,"messages":[` + user + `]}`, `calls tool \"memory\", which the request does not declare`},
		{"tool declared twice", "", `{"model":"m","max_tokens":10,"tools":[{"name":"memory","type":"memory_20250818"},{"name":"memory","input_schema":{"type":"object"}}],"messages":[` + user + `]}`, "Tool names must be unique"},
		{"tool name with a dot", "", `{"model":"m","max_tokens":10,"tools":[{"name":"a.b","input_schema":{"type":"object"}}],"messages":[` + user + `]}`, "should match pattern"},
		{"tool name too long", "", `{"model":"m","max_tokens":10,"tools":[{"name":"` + strings.Repeat("a", 129) + `","input_schema":{"type":"object"}}],"messages":[` + user + `]}`, "should match pattern"},
		{"top-level anyOf", "", `{"model":"m","max_tokens":10,"tools":[{"name":"x","input_schema":{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}}],"messages":[` + user + `]}`, "does not support oneOf, allOf, or anyOf at the top level"},
		{"empty text block", "", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{"empty text in a tool_result", "", `{"model":"m","max_tokens":10,"tools":` + memoryTools + `,"messages":[` + user + `,` + callTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":""}]}]}]}`, "text content blocks must be non-empty"},
		{"tool_use answered twice", "", `{"model":"m","max_tokens":10,"tools":` + memoryTools + `,"messages":[` + user + `,` + callTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"tool_result","tool_use_id":"t1","content":"again"}]}]}`, "each tool_use must have a single result"},
		{"text before a tool_result", "", `{"model":"m","max_tokens":10,"tools":` + memoryTools + `,"messages":[` + user + `,` + callTurn + `,{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`, "tool_result blocks must come first"},
		{"schema not an object", "", `{"model":"m","max_tokens":10,"tools":[{"name":"x","input_schema":{"type":"string"}}],"messages":[` + user + `]}`, "input_schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := claudetest.NewServer(claudetest.Turn{Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}})
			defer srv.Close()
			status, body := post(t, srv, tc.betas, tc.body)
			if status != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("status %d, body %s; want 400 with %q", status, body, tc.want)
			}
			// Refusals reports the refusal with the request's number.
			problem := srv.Requests()[0].Problem
			if err := srv.Refusals(); problem == "" || err == nil || err.Error() != "request 1: "+problem {
				t.Errorf("Refusals() = %v; want request 1 refused (problem %q)", err, problem)
			}
		})
	}
}

// A request that continues a thread stands for the whole conversation.
func TestThreads(t *testing.T) {
	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{{ID: "t1", Input: `{"command":"view","path":"/memories"}`}}},
		claudetest.Turn{Text: "done"},
		claudetest.Turn{Text: "unused"},
	)
	defer srv.Close()
	const beta = "message-threads-2026-08-12"
	status, body := post(t, srv, beta, `{"model":"m","max_tokens":10,"system":"s","tools":`+memoryTools+`,"thread":{"type":"create"},"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("create: %d %s", status, body)
	}
	var reply struct{ ID string }
	json.Unmarshal([]byte(body), &reply)
	status, body = post(t, srv, beta, `{"model":"m","max_tokens":10,"thread":{"type":"continue","previous_message_id":"`+reply.ID+`"},
		"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`)
	if status != 200 || !strings.Contains(body, `"done"`) {
		t.Fatalf("continue: %d %s", status, body)
	}
	reqs := srv.Requests()
	if got := len(reqs[1].Messages); got != 3 {
		t.Errorf("the continuing request stands for %d messages, want 3", got)
	}
	if string(reqs[1].System) != `"s"` || string(reqs[1].Tools) != memoryTools {
		t.Errorf("system %s, tools %s: want the thread's", reqs[1].System, reqs[1].Tools)
	}
	if results := reqs[1].ToolResults(); len(results) != 1 || results[0].Text != "ok" || results[0].ToolUseID != "t1" {
		t.Errorf("tool results %+v", results)
	}
	// A continuing request may not change system or tools.
	status, body = post(t, srv, beta, `{"model":"m","max_tokens":10,"system":"other","thread":{"type":"continue","previous_message_id":"msg_02"},
		"messages":[{"role":"user","content":"more"}]}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "cannot set system or tools") {
		t.Errorf("changed system on a thread: %d %s", status, body)
	}
	if err := srv.Refusals(); err == nil || err.Error() != "request 3: claudetest: a request that continues a thread cannot set system or tools" {
		t.Errorf("Refusals() = %v; want only request 3's", err)
	}
}

// Refusals is nil while every request was answered.
func TestNoRefusals(t *testing.T) {
	srv := claudetest.NewServer(claudetest.Turn{Text: "hello"})
	defer srv.Close()
	if status, body := post(t, srv, "", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`); status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	if err := srv.Refusals(); err != nil {
		t.Errorf("Refusals() = %v after an answered request", err)
	}
}

func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [true, null], "a" : 1.0 } `, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":{}}`, `{"a":{"x":null}}`, false},
	} {
		same, err := claudetest.SameJSON([]byte(tc.got), []byte(tc.want))
		if err != nil || same != tc.same {
			t.Errorf("SameJSON(%s, %s) = %v, %v; want %v", tc.got, tc.want, same, err, tc.same)
		}
	}
	for _, pair := range [][2]string{{`{`, `{}`}, {`{}`, `nope`}} {
		if _, err := claudetest.SameJSON([]byte(pair[0]), []byte(pair[1])); err == nil {
			t.Errorf("SameJSON(%s, %s): no error for text that is not JSON", pair[0], pair[1])
		}
	}
}
