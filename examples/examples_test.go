// The examples are built and run against a fake Messages API, so they
// cannot rot: each must compile, talk to the API as the SDK does, and leave
// the expected files behind.
package examples_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
	"github.com/memtool/memtool/claude/template"
)

// buildExamples builds every example into one directory.
func buildExamples(t *testing.T) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, r := range exampleRuns {
		args = append(args, "./"+r.name)
	}
	if out, err := exec.Command(gocmd, args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runExample runs an example in a new working directory against srv and
// returns its output; it fails t unless the example exits 0.
func runExample(t *testing.T, bin, dir, name string, srv *claudetest.Server, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.URL)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, out.String(), errOut.String())
	}
	for i, r := range srv.Requests() {
		if r.Problem != "" {
			t.Errorf("%s: request %d refused by the fake: %s", name, i+1, r.Problem)
		}
	}
	return out.String(), errOut.String()
}

// exampleRun is one run of an example against the fake API: its turns,
// the task, the exact stdout ("" where check looks at stdout itself), and
// check, which looks at the rest (stderr, the files left in dir, the
// requests the fake got).
type exampleRun struct {
	name   string
	turns  []claudetest.Turn
	task   string
	stdout string
	check  func(t *testing.T, dir, stdout, stderr string, srv *claudetest.Server)
}

var view = claudetest.ToolUse{Input: `{"command":"view","path":"/memories"}`}

var exampleRuns = []exampleRun{{
	name: "filememory",
	turns: []claudetest.Turn{
		{Calls: []claudetest.ToolUse{view}},
		{Calls: []claudetest.ToolUse{{Input: `{"command":"create","path":"/memories/user.md","file_text":"Name: Ada\n"}`}}},
		{Text: "I will remember that your name is Ada."},
	},
	task:   "My name is Ada; remember it.",
	stdout: "I will remember that your name is Ada.\n",
	check: func(t *testing.T, dir, _, _ string, _ *claudetest.Server) {
		if got, err := os.ReadFile(filepath.Join(dir, "memories", "user.md")); string(got) != "Name: Ada\n" {
			t.Errorf("memories/user.md = %q (%v)", got, err)
		}
	},
}, {
	name: "customstore",
	turns: []claudetest.Turn{
		{Text: "Checking memory.", Calls: []claudetest.ToolUse{view}},
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"create","path":"/memories/go/facts.md","file_text":"Go has goroutines.\n"}`},
			{Input: `{"command":"str_replace","path":"/memories/go/facts.md","old_str":"goroutines.","new_str":"goroutines and channels."}`},
		}},
		{Text: "Saved one fact about Go."},
	},
	task: "Remember a fact about Go.",
	check: func(t *testing.T, _, out, _ string, srv *claudetest.Server) {
		for _, want := range []string{"Checking memory.\n", "Saved one fact about Go.\n", "The store now holds:\n", "/memories/go/facts.md"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		results := srv.Requests()[2].ToolResults()
		if len(results) != 2 || results[1].IsError || !strings.Contains(results[1].Text, "goroutines and channels.") {
			t.Errorf("the edit of the new file did not run after its create: %+v", results)
		}
		for i, r := range srv.Requests() {
			if b := r.Header.Get("Anthropic-Beta"); b != "" {
				t.Errorf("request %d on the GA API sent anthropic-beta %q", i+1, b)
			}
		}
	},
}, {
	name: "multisession",
	turns: []claudetest.Turn{
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"view","path":"/memories/progress.md"}`},
			{Input: `{"command":"view","path":"/memories/features.md"}`},
			{Input: `{"command":"view","path":"/memories/decisions.md"}`},
		}},
		{Calls: []claudetest.ToolUse{
			{Input: `{"command":"str_replace","path":"/memories/features.md","old_str":"## Features\n","new_str":"## Features\n- [ ] shorten a URL\n"}`},
		}},
		{Text: "Listed the first feature."},
	},
	task:   "List the features.",
	stdout: "Listed the first feature.\n",
	check: func(t *testing.T, dir, _, errOut string, srv *claudetest.Server) {
		if !strings.Contains(errOut, "seeded /memories/progress.md") || !strings.Contains(errOut, "memory: str_replace /memories/features.md: ok") {
			t.Errorf("stderr:\n%s", errOut)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "project-memory", "features.md")); !strings.HasSuffix(string(got), "## Features\n- [ ] shorten a URL\n") {
			t.Errorf("features.md = %q (%v)", got, err)
		}
		if !strings.Contains(string(srv.Requests()[0].System), "before anything else") {
			t.Errorf("the dev guidance is not in the system prompt: %s", srv.Requests()[0].System)
		}
		if !strings.Contains(string(srv.Requests()[0].System), strings.Split(template.Dev().Guidance, "\n")[0]) {
			t.Errorf("system prompt: %s", srv.Requests()[0].System)
		}
	},
}, {
	name: "contextediting",
	turns: []claudetest.Turn{
		{Text: "Looking at my notes.", Calls: []claudetest.ToolUse{view}},
		{Text: "There is nothing to summarize yet."},
	},
	task:   "Summarize my notes.",
	stdout: "Looking at my notes.\nThere is nothing to summarize yet.\n",
	check: func(t *testing.T, _, _, errOut string, srv *claudetest.Server) {
		if !strings.Contains(errOut, "memory: view /memories: ok") {
			t.Errorf("stderr:\n%s", errOut)
		}
		for i, r := range srv.Requests() {
			if got := r.Header.Get("Anthropic-Beta"); got != "context-management-2025-06-27,compact-2026-01-12,message-threads-2026-08-12" {
				t.Errorf("request %d: anthropic-beta %q", i+1, got)
			}
			if !r.Stream {
				t.Errorf("request %d does not stream", i+1)
			}
		}
	},
}}

func TestExamples(t *testing.T) {
	bin := buildExamples(t)
	for _, r := range exampleRuns {
		t.Run(r.name, func(t *testing.T) {
			srv := claudetest.NewServer(r.turns...)
			defer srv.Close()
			dir := t.TempDir()
			out, errOut := runExample(t, bin, dir, r.name, srv, r.task)
			if r.stdout != "" && out != r.stdout {
				t.Errorf("stdout %q", out)
			}
			r.check(t, dir, out, errOut, srv)
		})
	}
}
