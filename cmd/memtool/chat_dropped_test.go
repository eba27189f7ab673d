//go:build claude

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// chatRequests runs a chat of the lines of stdin against a fake that
// answers with turns, and returns the last message of each request, and
// stderr.
func chatRequests(t *testing.T, stdin string, turns []claudetest.Turn, args ...string) ([]string, string) {
	t.Helper()
	srv := claudetest.NewServer(turns...)
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}
	_, errOut, _ := runCLI(t, vars, stdin, append([]string{"chat", "--store", "mem:"}, args...)...)
	srv.CheckRefusals(t)
	var last []string
	for _, r := range srv.Requests() {
		last = append(last, string(r.Messages[len(r.Messages)-1]))
	}
	return last, errOut
}

// A question that Claude refused, or that the API refused with an error
// that would come again (400: the prompt is too long), is dropped, and
// memtool says so: the next line is sent without it, not as [question,
// next line] for the rest of the chat.
func TestChatDropsRefusedQuestion(t *testing.T) {
	t.Parallel()
	for name, first := range map[string]claudetest.Turn{
		"refusal": {Text: "I can't help with that.", StopReason: "refusal"},
		"400":     {Error: &claudetest.Error{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			last, errOut := chatRequests(t, "THE REFUSED QUESTION\nwhat is 2+2?\nthanks\n",
				[]claudetest.Turn{first, {Text: "Four."}, {Text: "Fine."}})
			if len(last) != 3 {
				t.Fatalf("%d requests, want 3; stderr:\n%s", len(last), errOut)
			}
			for i, m := range last[1:] {
				if strings.Contains(m, "THE REFUSED QUESTION") {
					t.Errorf("request %d, for a later line, carries the refused question: %s", i+2, m)
				}
			}
			if !strings.Contains(last[1], "what is 2+2?") {
				t.Errorf("request 2 lacks its line: %s", last[1])
			}
			if strings.Count(errOut, "dropped") != 1 {
				t.Errorf("stderr does not say once that the question was dropped:\n%s", errOut)
			}
		})
	}
}

// A refused turn keeps the tool_result blocks of its user message, so that
// every tool_use of the conversation keeps its result (the fake refuses a
// request without), and drops only the text: here the results are those
// of a turn that stopped at --max-iterations before its call ran.
func TestChatRefusalKeepsToolResults(t *testing.T) {
	t.Parallel()
	last, errOut := chatRequests(t, "look\nTHE REFUSED QUESTION\nthanks\n", []claudetest.Turn{
		{Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}},
		{Text: "No.", StopReason: "refusal"},
		{Text: "Fine."},
	}, "--max-iterations", "1")
	if len(last) != 3 {
		t.Fatalf("%d requests, want 3; stderr:\n%s", len(last), errOut)
	}
	var msg struct {
		Content []struct {
			Type, Text string
			ToolUseID  string `json:"tool_use_id"`
		}
	}
	if err := json.Unmarshal([]byte(last[2]), &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Type != "tool_result" || msg.Content[0].ToolUseID == "" ||
		msg.Content[1].Type != "text" || msg.Content[1].Text != "thanks" {
		t.Errorf("request 3 sent %s, want the tool result and then only %q", last[2], "thanks")
	}
}

// A turn that failed in a way that trying again can mend (a 5xx, a 429)
// leaves the question to the next line, as an interrupted one does.
func TestChatCarriesQuestionAfterRetryableError(t *testing.T) {
	t.Parallel()
	for _, status := range []int{500, 429} {
		last, errOut := chatRequests(t, "THE QUESTION\nagain\n", []claudetest.Turn{
			{Error: &claudetest.Error{Status: status, Type: "api_error", Message: "try later"}},
			{Text: "Answer."},
		}, "--retries", "0")
		if len(last) != 2 || !strings.Contains(last[1], "THE QUESTION") || !strings.Contains(last[1], "again") {
			t.Errorf("after %d, the requests' last messages are %q, want the question carried; stderr:\n%s", status, last, errOut)
		}
		if strings.Contains(errOut, "dropped") {
			t.Errorf("after %d, stderr says the question was dropped:\n%s", status, errOut)
		}
	}
}

// The user name and password of ANTHROPIC_BASE_URL, which the SDK's error
// quotes in the request's URL, are masked in what chat and run print.
func TestChatMasksBaseURLUserinfo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"chat", "--store", "mem:"}, {"run", "--store", "mem:", "a task"}} {
		srv := claudetest.NewServer(claudetest.Turn{Error: &claudetest.Error{Status: 400, Message: "bad request"}})
		defer srv.Close()
		base := strings.Replace(srv.URL, "://", "://alice-token:s3cret-pass@", 1)
		vars := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": base}
		_, errOut, code := runCLI(t, vars, "hello\n", args...)
		if code != exitAPI || !strings.Contains(errOut, "bad request") {
			t.Fatalf("%s: exit %d, stderr:\n%s", args[0], code, errOut)
		}
		if strings.Contains(errOut, "s3cret-pass") || strings.Contains(errOut, "alice-token") {
			t.Errorf("%s: stderr shows the base URL's userinfo:\n%s", args[0], errOut)
		}
	}
}
