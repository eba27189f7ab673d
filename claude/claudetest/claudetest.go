// Package claudetest is a fake of the Anthropic Messages API for tests: a
// local HTTP server that answers POST /v1/messages from a script, in the
// real wire format (JSON, or server-sent events when the request streams),
// and records every request it received.
//
// It checks requests as the API does where a memory-tool agent can get them
// wrong, and answers 400 invalid_request_error when they are wrong: every
// tool_use must be answered by exactly one tool_result in the next user
// message, the tool_results coming before any other block, every called tool must be declared, tool names must be unique (and a
// client tool's must match the API's pattern, with an object input_schema
// that has no top-level oneOf, allOf or anyOf), context-management edits
// need their beta headers, a text block (in a tool_result too) may not be
// empty, and message threads work as the API's do (a
// request that continues a thread sends only its new messages;
// Request.Messages has the whole conversation).
//
// Point the real SDK client at it with Server.Client, or with
// ANTHROPIC_BASE_URL for a program under test. At the end of a test,
// Server.Refusals says whether it refused anything, and SameJSON compares
// what a request carried with what the test expects, whatever the key order.
package claudetest

import (
	"encoding/json"
	"errors"
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

// Refusals returns why the server refused each request it refused, one
// error per request ("request N: problem") joined with errors.Join; nil
// when it refused none. A test calls it at the end to see that the client
// sent only what the API accepts.
func (s *Server) Refusals() error {
	var errs []error
	for i, r := range s.Requests() {
		if r.Problem != "" {
			errs = append(errs, fmt.Errorf("request %d: %s", i+1, r.Problem))
		}
	}
	return errors.Join(errs...)
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
		s.refuse(w, req, fmt.Sprintf("claudetest: request %d is past the end of the script (%d turns)", n+1, len(s.script)))
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
		s.refuse(w, req, "claudetest: a Compaction turn is answered only without streaming")
		return
	}
	declared := toolNames(req.Tools)
	for _, c := range turn.Calls {
		if !slices.Contains(declared, c.name()) {
			s.refuse(w, req, fmt.Sprintf("claudetest: the script calls tool %q, which the request does not declare (tools: %v)", c.name(), declared))
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

// refuse records problem as the reason req was refused and answers it
// with an invalid_request_error.
func (s *Server) refuse(w http.ResponseWriter, req *Request, problem string) {
	s.mu.Lock()
	req.Problem = problem
	s.mu.Unlock()
	writeError(w, &Error{Message: problem})
}
