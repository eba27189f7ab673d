package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server"
)

// stuckStore is a memstore whose writes under slow/ never finish before
// their context ends: it stands in for a store that hangs, for timing
// only.
type stuckStore struct{ memtool.Store }

func (s stuckStore) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if strings.HasPrefix(name, "slow/") {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.WriteFile(ctx, name, data, mode)
}

func (s stuckStore) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if name == "slow" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.ReadDir(ctx, name)
}

// A search has the deadline of a call: one the store does not finish in
// time is answered 503, not left running until the connection's write
// deadline cuts it off with no answer.
func TestSearchHasCallTimeout(t *testing.T) {
	addr, tok := serveStuck(t, 0, keys.Read)
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/search?q=x", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	client := &http.Client{Timeout: 30 * time.Second} // a guard against a hang only
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("no answer to the search: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "did not finish in time") {
		t.Errorf("search of a store that hangs: %d %s", resp.StatusCode, b)
	}
}

// A turn whose calls, run a few at a time, would take longer than the
// server may take to write its answer still gets its answer: the turn
// ends before the write deadline, and every call is answered (those it
// did not reach as cancelled), instead of the connection closing with no
// answer after some of the changes were made.
func TestTurnAnsweredBeforeWriteTimeout(t *testing.T) {
	workers := 4 * runtime.GOMAXPROCS(0)
	addr, tok := serveStuck(t, 4*time.Second, keys.Write) // less than the 6 rounds of calls below
	n := 6 * workers
	answers := postTurn(t, addr, tok, strings.NewReader(string(slowCreates(n))), n)
	t.Logf("first: %s; last: %s", answers[0].Content, answers[len(answers)-1].Content)
	for i, a := range answers {
		if !a.IsError {
			t.Errorf("call %d succeeded: %s", i, a.Content)
		}
	}
}

// The write deadline runs from the end of the request's headers (net/http
// sets it then), so the time its body takes to arrive is spent from it:
// a turn whose body came slowly must still end in time to answer, rather
// than run its full budget from the body's end and have the connection
// closed with no answer after some of its changes were made.
func TestTurnAnsweredAfterASlowBody(t *testing.T) {
	workers := 4 * runtime.GOMAXPROCS(0)
	addr, tok := serveStuck(t, 6*time.Second, keys.Write) // a turn budget of 4.5 s
	n := 12 * workers                                     // 12 rounds of stuck calls
	body := slowCreates(n)
	pr, pw := io.Pipe()
	go func() {
		pw.Write(body[:len(body)/2])
		time.Sleep(3 * time.Second) // the rest comes late, within ReadTimeout
		pw.Write(body[len(body)/2:])
		pw.Close()
	}()
	postTurn(t, addr, tok, pr, n)
}

// serveStuck serves a stuckStore, its slow directory made, with a call
// deadline of a second and the given write deadline (zero: the
// server's default) until the test ends. It returns the server's address
// and a token of alice's with scope.
func serveStuck(t *testing.T, writeTimeout time.Duration, scope keys.Scope) (addr, tok string) {
	t.Helper()
	f := newFixture(t, func(c *server.Config) {
		store := stuckStore{memstore.New()}
		store.Mkdir(context.Background(), "slow")
		c.Open = func(context.Context, string) (memtool.Store, error) { return store, nil }
		c.CallTimeout = time.Second
		c.WriteTimeout = writeTimeout
	})
	_, tok = f.key(t, "alice", scope)
	addr, stop, done := listen(t, f.server, "", "")
	t.Cleanup(func() { stop(); <-done })
	return addr, tok
}

// slowCreates is the body of a turn of n creates under slow/, each of
// which the stuckStore holds until its deadline.
func slowCreates(n int) []byte {
	calls := make([]map[string]any, n)
	for i := range calls {
		calls[i] = map[string]any{"command": "create", "path": fmt.Sprintf("/memories/slow/%d.md", i), "file_text": "x"}
	}
	body, _ := json.Marshal(calls)
	return body
}

// turnAnswer is one answer of a turn.
type turnAnswer struct {
	IsError bool   `json:"is_error"`
	Content string `json:"content"`
}

// postTurn posts a turn of n calls to the server at addr and returns its
// n answers, or stops t.
func postTurn(t *testing.T, addr, tok string, body io.Reader, n int) []turnAnswer {
	t.Helper()
	status, b, err := postBody("http://"+addr, tok, body)
	if err != nil {
		t.Fatalf("no answer to the turn: %v", err)
	}
	var answers []turnAnswer
	if status != 200 || json.Unmarshal([]byte(b), &answers) != nil || len(answers) != n {
		t.Fatalf("answer: %d %.300s; want 200 and %d answers", status, b, n)
	}
	return answers
}

// One call is held to the turn's deadline too when its own timeout would
// run past it: its body came so late that the call's second would end
// after the write deadline, and it is answered (as cancelled) in time,
// not left without an answer. (A call whose own timeout ends in time runs
// without the turn's deadline, which would change nothing.)
func TestCallAnsweredAfterASlowBody(t *testing.T) {
	addr, tok := serveStuck(t, 4*time.Second, keys.Write) // a turn budget of 3 s; calls have 1 s
	body, _ := json.Marshal(map[string]any{"command": "create", "path": "/memories/slow/one.md", "file_text": "x"})
	pr, pw := io.Pipe()
	go func() {
		pw.Write(body[:len(body)/2])
		time.Sleep(3300 * time.Millisecond) // past the budget; the call's own second would end after 4 s
		pw.Write(body[len(body)/2:])
		pw.Close()
	}()
	status, b, err := postBody("http://"+addr, tok, pr)
	if err != nil {
		t.Fatalf("no answer to the call: %v", err)
	}
	var a turnAnswer
	if status != 200 || json.Unmarshal([]byte(b), &a) != nil || !a.IsError {
		t.Fatalf("answer: %d %.300s; want 200 and a tool error", status, b)
	}
}
