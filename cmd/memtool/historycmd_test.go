package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	versions "github.com/memtool/memtool/history"
)

// TestHistoryDiffRevert edits a file store through the history wrapper,
// then reads and reverts its versions with the memtool binary.
func TestHistoryDiffRevert(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	wrap := func(s memtool.Store) memtool.Store { return versions.New(s, nil) }
	runThrough(t, dir, wrap,
		`{"command":"create","path":"/memories/n.md","file_text":"tea\nno sugar\n"}`,
		`{"command":"str_replace","path":"/memories/n.md","old_str":"no sugar","new_str":"two sugars"}`,
		`{"command":"insert","path":"/memories/n.md","insert_line":0,"insert_text":"# Prefs"}`,
	)

	out, stderr, code := runBinary(t, "", "history", "--store", dir, "/memories/n.md")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "1\t") || !strings.Contains(lines[0], "\tupdate\t13 bytes") {
		t.Fatalf("history: exit %d, %q, %q", code, out, stderr)
	}

	out, _, code = runBinary(t, "", "diff", "--store", dir, "--from", "1", "/memories/n.md")
	want := "--- /memories/n.md (version 1)\n+++ /memories/n.md (current)\n@@ -1,3 +1,4 @@\n+# Prefs\n tea\n-no sugar\n+two sugars\n \n"
	if code != 0 || out != want {
		t.Errorf("diff:\n got %q\nwant %q", out, want)
	}

	if out, stderr, code := runBinary(t, "", "revert", "--store", dir, "/memories/n.md", "--to", "1"); code != 0 {
		t.Fatalf("revert: exit %d, %q, %q", code, out, stderr)
	}
	out, _, _ = runBinary(t, "", "view", "--store", dir, "/memories/n.md")
	if !strings.Contains(out, "no sugar") || strings.Contains(out, "Prefs") {
		t.Errorf("after revert: %q", out)
	}
	// The reverted-over content is a version too: undo the undo.
	out, _, _ = runBinary(t, "", "history", "--store", dir, "/memories/n.md")
	if n := strings.Count(out, "\n"); n != 3 || !strings.Contains(out, "3\t") || !strings.Contains(out, "\twrite\t") {
		t.Errorf("history after revert: %q", out)
	}
	if _, stderr, code := runBinary(t, "", "revert", "--store", dir, "/memories/n.md", "--to", "9"); code != exitFailed || !strings.Contains(stderr, "no such version") {
		t.Errorf("revert to a missing version: exit %d, %q", code, stderr)
	}
}

// TestRevertKeepsPolicyVersions: memtool revert keeps the versions the
// store's history policy keeps: a policy that keeps 30 versions does not
// lose ten of them to a revert, which once pruned with history's defaults
// (20 versions).
func TestRevertKeepsPolicyVersions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "memories")
	policy := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"history":{"max_versions":30}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"MEMTOOL_POLICY": policy}
	var in strings.Builder
	in.WriteString(`{"command":"create","path":"/memories/n.md","file_text":"v0\n"}` + "\n")
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&in, `{"command":"str_replace","path":"/memories/n.md","old_str":"v%d","new_str":"v%d"}`+"\n", i-1, i)
	}
	mustRunCLI(t, vars, in.String(), "exec", "--store", store)
	count := func() int {
		out := mustRunCLI(t, vars, "", "history", "--store", store, "/memories/n.md")
		return strings.Count(out, "\n")
	}
	if n := count(); n != 25 {
		t.Fatalf("%d versions before the revert, want 25", n)
	}
	mustRunCLI(t, vars, "", "revert", "--store", store, "--to", "3", "/memories/n.md")
	if n := count(); n != 26 {
		t.Errorf("%d versions after the revert, want 26: the revert dropped versions the policy keeps", n)
	}
}
