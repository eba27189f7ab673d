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
	want := "--- /memories/n.md (version 1)\n+++ /memories/n.md (current)\n@@ -1,2 +1,3 @@\n+# Prefs\n tea\n-no sugar\n+two sugars\n"
	if code != 0 || out != want {
		t.Errorf("diff:\n got %q\nwant %q", out, want)
	}

	// A revert writes through the history policy (TestRevertNeedsHistoryPolicy).
	policy := writePolicy(t, `{"history":{}}`)
	if out, stderr, code := runBinary(t, "", "revert", "--store", dir, "--policy", policy, "/memories/n.md", "--to", "1"); code != 0 {
		t.Fatalf("revert: exit %d, %q, %q", code, out, stderr)
	}
	out, _, _ = runBinary(t, "", "view", "--store", dir, "--policy", policy, "/memories/n.md")
	if !strings.Contains(out, "no sugar") || strings.Contains(out, "Prefs") {
		t.Errorf("after revert: %q", out)
	}
	// The reverted-over content is a version too: undo the undo.
	out, _, _ = runBinary(t, "", "history", "--store", dir, "--policy", policy, "/memories/n.md")
	if n := strings.Count(out, "\n"); n != 3 || !strings.Contains(out, "3\t") || !strings.Contains(out, "\twrite\t") {
		t.Errorf("history after revert: %q", out)
	}
	if _, stderr, code := runBinary(t, "", "revert", "--store", dir, "--policy", policy, "/memories/n.md", "--to", "9"); code != exitFailed || !strings.Contains(stderr, "no such version") {
		t.Errorf("revert to a missing version: exit %d, %q", code, stderr)
	}
}

// TestNoVersionsSaysWhy: with no history policy in force, history and
// diff say that nothing keeps versions, not only that there are none;
// with the policy, they say there are none.
func TestNoVersionsSaysWhy(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	if _, stderr, code := runBinary(t, "", "create", "--store", dir, "--text", "tea", "/memories/n.md"); code != 0 {
		t.Fatalf("create: exit %d, %q", code, stderr)
	}
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"history":{"max_versions":5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		why  bool
	}{
		{[]string{"history"}, exitOK, true},
		{[]string{"diff"}, exitFailed, true},
		{[]string{"history", "--policy", policy}, exitOK, false},
		{[]string{"diff", "--policy", policy}, exitFailed, false},
	} {
		args := append(append(c.args, "--store", dir), "/memories/n.md")
		_, stderr, code := runBinary(t, "", args...)
		if code != c.code || !strings.Contains(stderr, "no earlier versions of /memories/n.md") || strings.Contains(stderr, "no history policy") != c.why {
			t.Errorf("%q: exit %d, %q", args, code, stderr)
		}
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

// A revert is a change to the memory like any other: it goes through the
// whole policy stack, so the audit log records it, and the secrets and
// limits policies refuse it (changing nothing) when the version it would
// bring back breaks them: one written before those policies were added.
func TestRevertThroughPolicies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "memories")
	logFile := filepath.Join(dir, "audit.jsonl")
	writePolicy := func(name, policy string) map[string]string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
		return map[string]string{"MEMTOOL_POLICY": p}
	}
	historyOnly := writePolicy("history.json", `{"history":{}}`)
	strict := writePolicy("strict.json", fmt.Sprintf(`{"history":{},"secrets":"reject","limits":{"max_file_size":64},"audit":%q}`, logFile))

	// Versions 1 and 2 of n.md break the strict policy; the current
	// content and version 3 do not.
	secret := "key AKIA" + "IOSFODNN7EXAMPLE\n"
	long := strings.Repeat("long line\n", 10)
	mustRunCLI(t, historyOnly, jsonLine(createInput("/memories/n.md", secret))+
		jsonLine(createInput("/memories/n.md", long))+
		jsonLine(createInput("/memories/n.md", "short\n"))+
		jsonLine(createInput("/memories/n.md", "now\n")), "exec", "--store", store, "--overwrite")
	current := func() string {
		b, err := os.ReadFile(filepath.Join(store, "n.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	for _, tc := range []struct {
		version int
		refusal string
	}{{1, "AWS access key"}, {2, "Limit exceeded (file size)"}} {
		_, errOut, code := runCLI(t, strict, "", "revert", "--store", store, "--to", fmt.Sprint(tc.version), "/memories/n.md")
		if code == exitOK || !strings.Contains(errOut, tc.refusal) {
			t.Errorf("revert to version %d under the strict policy: exit %d, stderr %q; want a refusal naming %q", tc.version, code, errOut, tc.refusal)
		}
		if got := current(); got != "now\n" {
			t.Fatalf("after the refused revert to version %d the file holds %q", tc.version, got)
		}
	}
	mustRunCLI(t, strict, "", "revert", "--store", store, "--to", "3", "/memories/n.md")
	if got := current(); got != "short\n" {
		t.Fatalf("after the revert to version 3 the file holds %q", got)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if strings.Contains(line, `"path":"/memories/n.md"`) && strings.Contains(line, `"op":"write"`) {
			writes = append(writes, line)
		}
	}
	if len(writes) != 3 || !strings.Contains(writes[2], `"outcome":"ok"`) {
		t.Errorf("audit log writes of n.md: %q; want the two refused reverts and the one made\nwhole log:\n%s", writes, log)
	}
}

// TestRevertNeedsHistoryPolicy: revert without the history policy in force
// is refused and changes nothing, also on a store that holds versions but
// records no policy (made by a Go program with history.New). It once
// wrote through a bare history layer put in below the policy's others, so
// a version past the limits, with a secret, came back unaudited.
func TestRevertNeedsHistoryPolicy(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "memories")
	secret := "token AKIA" + "IOSFODNN7EXAMPLE and a long line over the size limit\n"
	runThrough(t, dir, func(s memtool.Store) memtool.Store { return versions.New(s, nil) },
		jsonLine(createInput("/memories/f.md", secret)),
		`{"command":"str_replace","path":"/memories/f.md","old_str":"`+strings.TrimSuffix(secret, "\n")+`","new_str":"ok"}`,
	)
	auditLog := filepath.Join(tmp, "audit.jsonl")
	strict := writePolicy(t, fmt.Sprintf(`{"limits": {"max_file_size": 10}, "secrets": "reject", "audit": %q}`, auditLog))
	for _, args := range [][]string{{"--policy", strict}, nil} {
		_, stderr, code := runCLI(t, nil, "", append([]string{"revert", "--store", dir, "/memories/f.md", "--to", "1"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "revert needs the history policy in force") {
			t.Errorf("revert %q: exit %d, %q; want it refused for want of the history policy", args, code, stderr)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "f.md")); string(data) != "ok\n" {
		t.Errorf("the refused revert left f.md holding %q", data)
	}
	// With the history policy beside the others, they judge the revert.
	withHistory := writePolicy(t, fmt.Sprintf(`{"limits": {"max_file_size": 10}, "secrets": "reject", "audit": %q, "history": {}}`, auditLog))
	if _, stderr, code := runCLI(t, nil, "", "revert", "--store", dir, "--policy", withHistory, "/memories/f.md", "--to", "1"); code != exitFailed || !strings.Contains(stderr, "AWS access key") {
		t.Errorf("revert with the history policy: exit %d, %q; want the secrets policy's refusal", code, stderr)
	}
	if log, _ := os.ReadFile(auditLog); !strings.Contains(string(log), `"path":"/memories/f.md","outcome":"refused"`) {
		t.Errorf("the refused revert is not in the audit log: %q", log)
	}
}
