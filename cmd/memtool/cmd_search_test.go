package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// memtool search prints grep-like lines PATH:LINE:TEXT and exits as grep
// does: 0 when a line matched, 1 when none did, 2 on an error; a tenant's
// search sees that tenant's memory alone.
func TestSearchCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, nil, "", "create", "--store", dir, "--text", "Tea at four\nno coffee\n", "/memories/a.md")
	mustRunCLI(t, nil, "", "create", "--store", dir, "--text", "coffee, black\ntea (green)", "/memories/d/b.md")
	for _, c := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"coffee"}, exitOK, "/memories/a.md:2:no coffee\n/memories/d/b.md:1:coffee, black\n", ""},
		{[]string{"TEA"}, exitOK, "/memories/a.md:1:Tea at four\n/memories/d/b.md:2:tea (green)\n", ""},
		{[]string{"--case-sensitive", "Tea"}, exitOK, "/memories/a.md:1:Tea at four\n", ""},
		{[]string{"--regex", "^tea \\(", "--limit", "5"}, exitOK, "/memories/d/b.md:2:tea (green)\n", ""},
		{[]string{"(green)"}, exitOK, "/memories/d/b.md:2:tea (green)\n", ""},
		{[]string{"--path", "/memories/d", "tea"}, exitOK, "/memories/d/b.md:2:tea (green)\n", ""},
		{[]string{"--limit", "1", "coffee"}, exitOK, "/memories/a.md:2:no coffee\n", "1 of 2 matching lines shown"},
		{[]string{"milk"}, exitNoMatch, "", ""},
		{[]string{"--regex", "(tea"}, exitSearchError, "", "not a valid regular expression: error parsing regexp: missing closing ): `(tea`"},
		{[]string{"--path", "/etc", "tea"}, exitSearchError, "", "Path must be /memories"},
		{[]string{"--path", "/memories/none", "tea"}, exitSearchError, "", "does not exist"},
		{[]string{"--limit", "0", "tea"}, exitSearchError, "", "--limit"},
		{[]string{}, exitSearchError, "", "want one QUERY"},
		{[]string{"a", "b"}, exitSearchError, "", "want one QUERY"},
	} {
		args := append([]string{"search", "--store", dir}, c.args...)
		out, errOut, code := runCLI(t, nil, "", args...)
		if code != c.code || out != c.stdout || !strings.Contains(errOut, c.errs) || (c.errs == "") != (errOut == "") {
			t.Errorf("memtool %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				strings.Join(args, " "), code, out, errOut, c.code, c.stdout, c.errs)
		}
	}
	if _, errOut, code := runCLI(t, nil, "", "search", "--store", filepath.Join(dir, "missing"), "tea"); code != exitSearchError || errOut == "" {
		t.Errorf("search in a missing store: exit %d, stderr %q; want exit 2 and a message", code, errOut)
	}

	multi := t.TempDir()
	mustRunCLI(t, nil, "", "create", "--store", multi, "--tenant", "alice", "--text", "tea for alice", "/memories/x.md")
	mustRunCLI(t, nil, "", "create", "--store", multi, "--tenant", "bob", "--text", "tea for bob", "/memories/x.md")
	if out := mustRunCLI(t, nil, "", "search", "--store", multi, "--tenant", "bob", "tea"); out != "/memories/x.md:1:tea for bob\n" {
		t.Errorf("search --tenant bob: %q", out)
	}
}

// memtool run --search gives the model memory_search next to memory.
func TestRunWithSearch(t *testing.T) {
	t.Parallel()
	srv := claudetest.NewServer(
		// A search runs beside the memory calls of its turn, not after
		// them: it comes in the next turn.
		claudetest.Turn{Calls: []claudetest.ToolUse{{Input: `{"command":"create","path":"/memories/a.md","file_text":"green tea\nblack coffee"}`}}},
		claudetest.Turn{Calls: []claudetest.ToolUse{{Name: "memory_search", Input: `{"query":"COFFEE"}`}}},
		claudetest.Turn{Text: "Done."},
	)
	defer srv.Close()
	_, errOut, code := runMemtool(t, apiEnv(srv), "", "run", "--store", filepath.Join(t.TempDir(), "m"), "--search", "Find coffee.")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if err := srv.Refusals(); err != nil {
		t.Fatal(err)
	}
	if tools := string(srv.Requests()[0].Tools); !strings.Contains(tools, `"memory_search"`) {
		t.Errorf("the request declares %s", tools)
	}
	results := srv.Requests()[2].ToolResults()
	if len(results) != 1 || results[0].IsError || results[0].Text != "1 matching line:\n/memories/a.md:2:black coffee" {
		t.Errorf("memory_search's result: %+v", results)
	}
}
