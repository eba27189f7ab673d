package claude_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/remotestore"
	"github.com/memtool/memtool/storetest"
)

// A memory call whose step's context ended after the store made the
// change, but before its answer came back (a remote store: the server
// inserted the line, the client gave up waiting), may have been made: the
// model is told to look before trying again. When the runner's step is
// run again, the SDK runs the turn's calls again; that call must not run
// a second time (the line would be inserted twice), and the model must be
// told what it was told the first time.
func TestRetriedStepDoesNotRepeatALostChange(t *testing.T) {
	inner := memstore.New()
	if err := inner.WriteFile(context.Background(), "x.md", []byte("a\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	api := remotetest.Handler(inner, "")
	step, cancel := context.WithCancel(context.Background())
	defer cancel()
	var changes atomic.Int32
	// Every change is made; the first one's answer is lost: the step's
	// context ends once the server has made it, and the server then
	// waits for the client to give up.
	lose := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || changes.Add(1) > 1 {
			api.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(httptest.NewRecorder(), r)
		cancel()
		<-r.Context().Done()
	})
	httpSrv := httptest.NewServer(lose)
	defer httpSrv.Close()
	remote, err := remotestore.Open(httpSrv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()

	insert := `{"command":"insert","path":"/memories/x.md","insert_line":1,"insert_text":"b"}`
	srv := claudetest.NewServer(claudetest.Turn{Calls: []claudetest.ToolUse{{Input: insert}}}, claudetest.Turn{Text: "Done."})
	defer srv.Close()
	client := srv.Client()
	var mu sync.Mutex
	var told []string
	runner := claude.NewRunner(&client, memtool.New(remote, nil), userParams("hi"),
		claude.WithOnCall(func(_ context.Context, c claude.Call) {
			mu.Lock()
			told = append(told, c.Result.Text)
			mu.Unlock()
		}))
	retryErr := retryCutStep(t, runner, context.Background(), step)

	if got := storetest.ReadText(t, inner, "x.md"); got != "a\nb\n" {
		t.Errorf("x.md = %q after the retried step, want %q (the insert made once)", got, "a\nb\n")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || !strings.Contains(told[0], "may or may not have been made") {
		t.Errorf("the insert ran %d times, answering %q; want once, answering that it may have been made", len(told), told)
	}
	if retryErr != nil {
		t.Errorf("the retried step: %v", retryErr)
	}
	srv.CheckRefusals(t)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests reached the API, want 2", len(reqs))
	}
	results := allToolResults(t, reqs[1].Messages)
	if len(results) != 1 || !strings.Contains(string(results[0]), "may or may not have been made") {
		t.Errorf("the model was told %s; want once that the insert may have been made", results)
	}
}
