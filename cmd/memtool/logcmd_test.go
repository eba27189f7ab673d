package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
	"github.com/memtool/memtool/memstore"
)

// writeAuditLog runs a few commands through the audit wrapper and returns
// the log's file name.
func writeAuditLog(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tenant := range []string{"alice", "bob"} {
		mem := memtool.New(audit.New(memstore.New(), f, &audit.Options{Tenant: tenant}), nil)
		for _, in := range []string{
			`{"command":"create","path":"/memories/notes/a.md","file_text":"hello"}`,
			`{"command":"view","path":"/memories/notes/a.md"}`,
			`{"command":"str_replace","path":"/memories/notes/a.md","old_str":"absent","new_str":"x"}`,
			`{"command":"create","path":"/memories/b.md","file_text":"b"}`,
		} {
			mem.Run(context.Background(), []byte(in))
		}
	}
	return name
}

// runBinary runs the memtool binary with args and stdin.
func runBinary(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runMemtool(t, childEnv(), stdin, args...)
}

func TestLog(t *testing.T) {
	t.Parallel()
	name := writeAuditLog(t)
	lines := func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

	out, stderr, code := runBinary(t, "", "log", name)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	all := lines(out)
	// Per tenant: mkdir, create, read, update (edit_failed), create.
	if len(all) != 10 {
		t.Fatalf("want 10 entries, got %d:\n%s", len(all), out)
	}
	fields := strings.Split(all[1], "\t")
	if len(fields) != 7 || fields[1] != "alice" || fields[2] != "create" || fields[3] != "/memories/notes/a.md" || fields[4] != "ok" || fields[5] != "5 B" || !strings.HasSuffix(fields[6], "µs") {
		t.Errorf("line 2: %q", fields)
	}

	for _, c := range []struct {
		args []string
		want int
		each string
	}{
		{[]string{"--tenant", "bob"}, 5, "\tbob\t"},
		{[]string{"--op", "update"}, 2, "\tupdate\t"},
		{[]string{"--outcome", "edit_failed"}, 2, "\tedit_failed\t"},
		{[]string{"--path", "/memories/notes"}, 8, "/memories/notes"},
		{[]string{"--tenant", "alice", "--path", "/memories/b.md"}, 1, "\t/memories/b.md\t"},
		{[]string{"--since", "1h"}, 10, "\t"},
		{[]string{"--until", "2000-01-01T00:00:00Z"}, 0, ""},
	} {
		out, stderr, code := runBinary(t, "", append([]string{"log"}, append(c.args, name)...)...)
		wantStderr := ""
		if c.want == 0 {
			wantStderr = "memtool log: no entry matches\n"
		}
		if code != 0 || stderr != wantStderr {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
			continue
		}
		got := lines(out)
		if out == "" {
			got = nil
		}
		if len(got) != c.want {
			t.Errorf("%v: %d entries, want %d:\n%s", c.args, len(got), c.want, out)
		}
		for _, l := range got {
			if !strings.Contains(l, c.each) {
				t.Errorf("%v: entry %q lacks %q", c.args, l, c.each)
			}
		}
	}

	// --json from stdin gives the entries back as they were logged.
	data, _ := os.ReadFile(name)
	out, _, code = runBinary(t, string(data), "log", "--json", "--op", "read")
	var e audit.Entry
	if code != 0 || json.Unmarshal([]byte(lines(out)[0]), &e) != nil || e.Op != "read" || e.Bytes != 5 || len(lines(out)) != 2 {
		t.Errorf("--json: exit %d, %q", code, out)
	}
}

func TestLogErrors(t *testing.T) {
	t.Parallel()
	name := writeAuditLog(t)
	data, _ := os.ReadFile(name)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, append(data, "not json\n"...), 0o600)
	_, stderr, code := runBinary(t, "", "log", bad)
	if code != exitFailed || !strings.Contains(stderr, "line 11") {
		t.Errorf("a bad line: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runBinary(t, "", "log", "--since", "yesterday", name)
	if code != exitUsage || !strings.Contains(stderr, "--since") {
		t.Errorf("bad --since: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runBinary(t, "", "log", filepath.Join(t.TempDir(), "missing"))
	if code != exitFailed || stderr == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}
