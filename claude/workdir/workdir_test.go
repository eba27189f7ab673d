package workdir_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/claudetest"
)

// sessionOne initialises the progress log and the feature list in memory
// and implements the first feature in the work directory.
var sessionOne = []claudetest.Turn{
	{Calls: []claudetest.ToolUse{call("memory", `{"command":"view","path":"/memories"}`)}},
	{Calls: []claudetest.ToolUse{
		call("memory", `{"command":"create","path":"/memories/progress.md","file_text":"# Progress\n- session 1: started\n"}`),
		call("memory", `{"command":"create","path":"/memories/features.md","file_text":"- [ ] login page\n- [ ] logout\n"}`),
		call("write", `{"file_path":"login.html","content":"<form>login</form>\n"}`),
	}},
	{Calls: []claudetest.ToolUse{
		call("memory", `{"command":"str_replace","path":"/memories/features.md","old_str":"- [ ] login page","new_str":"- [x] login page"}`),
		call("memory", `{"command":"insert","path":"/memories/progress.md","insert_line":2,"insert_text":"- session 1: login page done, logout next"}`),
	}},
	{Text: "The login page is done."},
}

// sessionTwo reads memory first, then the work, is refused a write outside
// the work directory, and continues with the next feature.
func sessionTwo(outside string) []claudetest.Turn {
	return []claudetest.Turn{
		{Calls: []claudetest.ToolUse{
			call("memory", `{"command":"view","path":"/memories/progress.md"}`),
			call("memory", `{"command":"view","path":"/memories/features.md"}`),
		}},
		{Calls: []claudetest.ToolUse{
			call("read", `{"file_path":"login.html"}`),
			call("write", `{"file_path":"../escaped.txt","content":"x"}`),
			call("write", `{"file_path":"`+outside+`","content":"x"}`),
		}},
		{Calls: []claudetest.ToolUse{
			call("write", `{"file_path":"logout.html","content":"<button>logout</button>\n"}`),
			call("memory", `{"command":"str_replace","path":"/memories/features.md","old_str":"- [ ] logout","new_str":"- [x] logout"}`),
		}},
		{Text: "Logout is done too."},
	}
}

// The multi-session pattern end to end: session 1 sets up memory and does
// one feature; session 2, a fresh runner over the same store, reads memory
// first and continues; a write outside the work directory is refused.
func TestTwoSessions(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	storeDir, work := filepath.Join(root, "memory"), filepath.Join(root, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside.txt")

	// Session 1, through the SDK's runner.
	srv1 := claudetest.NewServer(sessionOne...)
	defer srv1.Close()
	client1 := srv1.Client()
	mem, hands := openSession(t, storeDir, work)
	final, err := claude.NewRunner(&client1, mem, userParams("Add the login page."),
		hands.Option(), claude.WithGuidance(hands.Guidance())).RunToCompletion(ctx)
	if err != nil {
		t.Fatalf("session 1: %v (refusals: %v)", err, srv1.Refusals())
	}
	if err := srv1.Refusals(); err != nil {
		t.Fatal(err)
	}
	if got := claude.Text(final); got != "The login page is done." {
		t.Errorf("session 1 ends with %q", got)
	}
	reqs := srv1.Requests()
	if got := resultTexts(reqs[2])["toolu_02_3"]; got != "wrote 19 bytes to login.html" {
		t.Errorf("session 1 write: %q", got)
	}
	var tools []string
	_ = jsonNames(reqs[0].Tools, &tools)
	if want := []string{"memory", "read", "write", "edit", "glob", "grep"}; !slices.Equal(tools, want) {
		t.Errorf("declared tools %v, want %v (no bash unless asked)", tools, want)
	}
	if !strings.Contains(string(reqs[0].System), "work directory") {
		t.Errorf("system prompt lacks the work-directory guidance: %s", reqs[0].System)
	}

	// Session 2, a new store handle, tools and streaming runner.
	srv2 := claudetest.NewServer(sessionTwo(outside)...)
	defer srv2.Close()
	client2 := srv2.Client()
	mem2, hands2 := openSession(t, storeDir, work)
	runner := claude.NewStreamingRunner(&client2, mem2, userParams("Continue."), hands2.Option())
	for events, err := range runner.AllStreaming(ctx) {
		if err != nil {
			t.Fatalf("session 2: %v (refusals: %v)", err, srv2.Refusals())
		}
		for _, err := range events {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := srv2.Refusals(); err != nil {
		t.Fatal(err)
	}
	reqs = srv2.Requests()
	if len(reqs) != 4 {
		t.Fatalf("session 2 sent %d requests, want 4", len(reqs))
	}
	first := resultTexts(reqs[1]) // memory, read first
	if got := first["toolu_01_1"]; !strings.Contains(got, "- session 1: login page done, logout next") {
		t.Errorf("session 2 did not see session 1's progress: %q", got)
	}
	if got := first["toolu_01_2"]; !strings.Contains(got, "- [x] login page") || !strings.Contains(got, "- [ ] logout") {
		t.Errorf("session 2 did not see the feature list: %q", got)
	}
	second := resultTexts(reqs[2])
	if got := second["toolu_02_1"]; got != "<form>login</form>\n" {
		t.Errorf("session 2 read %q", got)
	}
	for _, id := range []string{"toolu_02_2", "toolu_02_3"} {
		if got := second[id]; !strings.HasPrefix(got, "!Error: write: path ") || !strings.Contains(got, "outside the session's working directory") {
			t.Errorf("write outside the work directory (%s): %q, want a refusal", id, got)
		}
	}
	for _, p := range []string{outside, filepath.Join(root, "escaped.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written outside the work directory", p)
		}
	}

	// What both sessions left.
	for name, want := range map[string]string{
		filepath.Join(work, "login.html"):      "<form>login</form>\n",
		filepath.Join(work, "logout.html"):     "<button>logout</button>\n",
		filepath.Join(storeDir, "features.md"): "- [x] login page\n- [x] logout\n",
		filepath.Join(storeDir, "progress.md"): "# Progress\n- session 1: started\n- session 1: login page done, logout next\n",
	} {
		if data, err := os.ReadFile(name); err != nil || string(data) != want {
			t.Errorf("%s = %q, %v; want %q", name, data, err, want)
		}
	}
}
