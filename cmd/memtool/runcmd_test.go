package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/template"
)

// The tests of run, chat and init drive the real binary against a fake
// Messages API (claudetest), reached through ANTHROPIC_BASE_URL, as a user
// would with a proxy.

func apiEnv(srv *claudetest.Server) []string {
	return childEnv("ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.URL)
}

// A user seeds the dev template, then runs a task: Claude reads the files,
// edits them, writes a new one, hits an error, and answers.
func TestRunDevSession(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mem")
	out, errOut, code := runMemtool(t, childEnv(), "", "init", "--template", "dev", "--store", dir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	for _, f := range []string{"progress.md", "features.md", "decisions.md"} {
		if !strings.Contains(out, "created /memories/"+f) {
			t.Errorf("init output lacks %s:\n%s", f, out)
		}
	}
	if !strings.Contains(out, template.Dev().Guidance) {
		t.Errorf("init does not show the guidance:\n%s", out)
	}

	srv := claudetest.NewServer(
		claudetest.Turn{Text: "Reading my memory first.", Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}},
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"view","path":"/memories/progress.md"}`},
			{Input: `{"command":"view","path":"/memories/features.md"}`},
			{Input: `{"command":"view","path":"/memories/decisions.md"}`},
		}},
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"str_replace","path":"/memories/features.md","old_str":"## Features\n","new_str":"## Features\n- [ ] login page\n"}`},
			{Input: `{"command":"create","path":"/memories/notes/api.md","file_text":"POST /login takes a JSON body.\n"}`},
			{Input: `{"command":"view","path":"/memories/missing.md"}`},
		}},
		claudetest.Turn{Calls: []claudetest.ToolUse{
			{Input: `{"command":"insert","path":"/memories/progress.md","insert_line":8,"insert_text":"## Session 1\n- Done: planned the login page\n\n"}`},
		}},
		claudetest.Turn{Text: "Planned the login page; progress is recorded."},
	)
	defer srv.Close()
	out, errOut, code = runMemtool(t, apiEnv(srv), "", "run", "--store", dir, "--template", "dev",
		"--context-editing", "--compact", "--model", "claude-test-model", "--system", "You build web apps.", "Plan the login page")
	srv.CheckRefusals(t)
	if code != 0 {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if out != "Planned the login page; progress is recorded.\n" { // the final answer only
		t.Errorf("stdout = %q", out)
	}

	// One line per memory operation, on stderr, turn after turn.
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	want := [][]string{
		{"memory: view /memories: ok"},
		{"memory: view /memories/progress.md: ok", "memory: view /memories/features.md: ok", "memory: view /memories/decisions.md: ok"},
		{"memory: str_replace /memories/features.md: ok", "memory: create /memories/notes/api.md: ok",
			"memory: view /memories/missing.md: error: The path /memories/missing.md does not exist. Please provide a valid path."},
		{"memory: insert /memories/progress.md: ok"},
	}
	for _, turn := range want {
		if len(lines) < len(turn) {
			t.Fatalf("stderr ends early:\n%s", errOut)
		}
		got := lines[:len(turn)]
		lines = lines[len(turn):]
		for _, w := range turn { // calls of one turn finish in any order
			if !contains(got, w) {
				t.Errorf("stderr lacks %q in %q", w, got)
			}
		}
	}
	if len(lines) > 0 {
		t.Errorf("more on stderr: %q", lines)
	}

	// The files are in the store, on disk.
	disk := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := disk("notes/api.md"); got != "POST /login takes a JSON body.\n" {
		t.Errorf("notes/api.md = %q", got)
	}
	if got := disk("features.md"); !strings.HasSuffix(got, "## Features\n- [ ] login page\n") {
		t.Errorf("features.md = %q", got)
	}
	if got := disk("progress.md"); !strings.Contains(got, "## Session 1\n- Done: planned the login page\n") {
		t.Errorf("progress.md = %q", got)
	}

	// What reached the API.
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	first := reqs[0]
	if got := first.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("authorization %q", got)
	}
	if got := first.Header.Get("Anthropic-Beta"); got != "context-management-2025-06-27,compact-2026-01-12,message-threads-2026-08-12" {
		t.Errorf("anthropic-beta %q", got)
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
	}
	json.Unmarshal(first.Body, &body)
	if body.Model != "claude-test-model" || body.MaxTokens != 8192 {
		t.Errorf("model %q, max_tokens %d", body.Model, body.MaxTokens)
	}
	wantSystem, _ := json.Marshal([]map[string]string{
		{"type": "text", "text": "You build web apps."},
		{"type": "text", "text": claude.OrganizedMemoryGuidance},
		{"type": "text", "text": template.Dev().Guidance},
	})
	if !claudetest.JSONEqual(t, first.System, string(wantSystem)) {
		t.Errorf("system %s", first.System)
	}
	wantCM := `{"edits":[
		{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":100000},"keep":{"type":"tool_uses","value":3},"exclude_tools":["memory"]},
		{"type":"compact_20260112","trigger":{"type":"input_tokens","value":150000}}]}`
	for i, r := range reqs {
		if !claudetest.JSONEqual(t, r.ContextManagement, wantCM) {
			t.Errorf("request %d: context_management %s", i+1, r.ContextManagement)
		}
		if !r.Stream {
			t.Errorf("request %d does not stream", i+1)
		}
	}
	results := reqs[3].ToolResults()
	if len(results) != 3 || !claudetest.JSONEqual(t, results[2].Raw, `{"type":"tool_result","tool_use_id":"toolu_03_3","is_error":true,
		"content":[{"type":"text","text":"Error: The path /memories/missing.md does not exist. Please provide a valid path."}]}`) {
		t.Errorf("request 4 tool results: %+v", results)
	}
}

// An API failure ends run with exit status 5 and the API's message.
func TestRunAPIFailure(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(claudetest.Turn{Error: &claudetest.Error{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"}})
	defer srv.Close()
	dir := t.TempDir()
	out, errOut, code := runMemtool(t, apiEnv(srv), "", "run", "--store", dir, "remember this")
	if code != exitAPI {
		t.Errorf("exit %d, want %d", code, exitAPI)
	}
	if out != "" || !strings.Contains(errOut, "invalid x-api-key") || !strings.HasPrefix(errOut, "memtool run: ") {
		t.Errorf("stdout %q\nstderr %q", out, errOut)
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer()
	defer srv.Close()
	dir := t.TempDir()
	checkUsageErrors(t, srv, []usageCase{
		{childEnv(), []string{"run", "--store", dir, "task"}, "ANTHROPIC_API_KEY is not set"},
		{apiEnv(srv), []string{"run", "--store", dir}, "give the task as one argument"},
		{apiEnv(srv), []string{"run", "--store", dir, "--template", "nope", "task"}, `unknown template "nope"`},
		{apiEnv(srv), []string{"chat", "--store", dir, "extra"}, `unexpected argument "extra"`},
		{childEnv(), []string{"chat", "--store", dir}, "ANTHROPIC_API_KEY is not set"},
		{childEnv(), []string{"init", "--template", "nope", "--store", dir}, `unknown template "nope"`},
	})
}

// A usageCase is a command line that memtool must refuse as a usage error
// whose message holds want.
type usageCase struct {
	env  []string
	args []string
	want string
}

// checkUsageErrors runs the cases, each of which must end with exit status
// exitUsage and its message, and checks that none sent srv a request.
func checkUsageErrors(t *testing.T, srv *claudetest.Server, cases []usageCase) {
	t.Helper()
	for _, tc := range cases {
		_, errOut, code := runMemtool(t, tc.env, "", tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("memtool %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
}

// A run that hits --max-iterations says so and fails.
func TestRunMaxIterations(t *testing.T) {
	t.Parallel()
	loop := claudetest.Turn{Text: "Looking.", Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}}
	srv := claudetest.NewServer(loop, loop, loop)
	defer srv.Close()
	_, errOut, code := runMemtool(t, apiEnv(srv), "", "run", "--store", t.TempDir(), "--max-iterations", "2", "--threads=false", "task")
	srv.CheckRefusals(t)
	if code != exitFailed || !strings.Contains(errOut, "stopped after 2 requests (--max-iterations)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	for i, r := range srv.Requests() {
		if r.Thread != "" {
			t.Errorf("request %d on a thread with --threads=false", i+1)
		}
	}
}

// Ctrl-C ends a run with exit status 130 and leaves what was saved.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(
		claudetest.Turn{Calls: []claudetest.ToolUse{{Input: `{"command":"create","path":"/memories/a.md","file_text":"saved\n"}`}}},
		claudetest.Turn{Text: "Now thinking for a long time", Hang: true},
	)
	defer srv.Close()
	dir := t.TempDir()
	// The deadline only ends a hung child; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBinary(t), "run", "--store", dir, "task")
	cmd.Env = apiEnv(srv)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-srv.Hung()
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	checkNoRace(t, errOut.String())
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.HasSuffix(errOut.String(), "memtool run: interrupted\n") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(data) != "saved\n" {
		t.Errorf("a.md = %q, %v", data, err)
	}
}

func TestInitKeepsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, errOut, code := runMemtool(t, childEnv(), "", "init", "--store", dir); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "progress.md"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := runMemtool(t, childEnv(), "", "init", "--template", "dev", "--store", dir)
	if code != 0 || !strings.Contains(out, "kept    /memories/progress.md (already there)") {
		t.Errorf("second init: exit %d\n%s", code, out)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "progress.md")); string(data) != "mine" {
		t.Errorf("progress.md = %q", data)
	}
	out, _, _ = runMemtool(t, childEnv(), "", "init", "--list")
	if !strings.HasPrefix(out, "dev ") {
		t.Errorf("init --list: %q", out)
	}
}

// watcher collects a child's output as it comes, so a test can wait for a
// piece of it.
type watcher struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
	done    bool
}

func watch(r io.Reader) *watcher {
	w := &watcher{changed: make(chan struct{})}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			w.mu.Lock()
			w.buf.Write(b[:n])
			w.done = err != nil
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return w
}

// waitFor waits until s appears at or after offset from and returns the
// offset after it; it fails t if the output ends first.
func (w *watcher) waitFor(t *testing.T, from int, s string) int {
	t.Helper()
	for {
		w.mu.Lock()
		text, done, changed := w.buf.String(), w.done, w.changed
		w.mu.Unlock()
		if i := strings.Index(text[min(from, len(text)):], s); i >= 0 {
			return from + i + len(s)
		}
		if done {
			t.Fatalf("output ended without %q:\n%s", s, text)
		}
		<-changed
	}
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// A chat: a turn with memory, Ctrl-C at the prompt, a turn cut short by
// Ctrl-C while Claude streams, a turn after it on a valid conversation, and
// Ctrl-D.
func TestChat(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(
		claudetest.Turn{Text: "Hello! Let me look.", Calls: []claudetest.ToolUse{{Input: `{"command":"view","path":"/memories"}`}}},
		claudetest.Turn{Text: "Nothing stored yet."},
		claudetest.Turn{Text: "Thinking about it for a long time", Hang: true},
		claudetest.Turn{Calls: []claudetest.ToolUse{{Input: `{"command":"create","path":"/memories/prefs.md","file_text":"likes tea\n"}`}}},
		claudetest.Turn{Text: "Saved that you like tea."},
	)
	defer srv.Close()
	dir := t.TempDir()

	// The deadline only ends a hung child; it asserts nothing about speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudeBinary(t), "chat", "--store", dir)
	cmd.Env = apiEnv(srv)
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, stdoutPipe := startPiped(t, cmd)
	stdout, stderr := watch(stdoutPipe), watch(stderrPipe)

	e := stderr.waitFor(t, 0, "> ")
	io.WriteString(stdin, "What do you remember?\n")
	o := stdout.waitFor(t, 0, "Hello! Let me look.\n\nNothing stored yet.\n")
	e = stderr.waitFor(t, e, "memory: view /memories: ok\n")
	e = stderr.waitFor(t, e, "> ")

	// Ctrl-C at the prompt ends nothing.
	cmd.Process.Signal(os.Interrupt)
	e = stderr.waitFor(t, e, "(Ctrl-D or /exit ends the chat)")
	e = stderr.waitFor(t, e, "> ")

	// Ctrl-C while Claude streams ends the turn.
	io.WriteString(stdin, "Think hard.\n")
	<-srv.Hung()
	o = stdout.waitFor(t, o, "Thinking about")
	cmd.Process.Signal(os.Interrupt)
	e = stderr.waitFor(t, e, "(interrupted; memory keeps what was done)")
	e = stderr.waitFor(t, e, "> ")

	io.WriteString(stdin, "I like tea.\n")
	stdout.waitFor(t, o, "Saved that you like tea.\n")
	stderr.waitFor(t, e, "memory: create /memories/prefs.md: ok\n")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chat: %v\nstderr:\n%s", err, stderr)
	}
	checkNoRace(t, stderr.String())
	srv.CheckRefusals(t)

	if data, err := os.ReadFile(filepath.Join(dir, "prefs.md")); err != nil || string(data) != "likes tea\n" {
		t.Errorf("prefs.md = %q, %v", data, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	// The turn after the interrupted one carries the whole conversation,
	// the unanswered question and the new one together.
	after := reqs[3]
	if len(after.Messages) != 5 {
		t.Errorf("request 4: %d messages, want 5", len(after.Messages))
	}
	last := after.Messages[len(after.Messages)-1]
	if !claudetest.JSONEqual(t, last, `{"role":"user","content":[{"type":"text","text":"Think hard."},{"type":"text","text":"I like tea."}]}`) {
		t.Errorf("request 4 last message %s", last)
	}
}

// TestInitHint: the command init shows for every session names the
// tenant and the policy file init was given, and quotes a store the shell
// would split.
func TestInitHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "my memories")
	policy := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"history":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, nil, "", "init", "--store", db, "--tenant", "bob", "--policy", policy)
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	want := "memtool run --store '" + db + "' --tenant bob --policy " + policy + " --template dev \"task\""
	if !strings.Contains(out, want) {
		t.Errorf("init's hint lacks %s:\n%s", want, out)
	}
}
