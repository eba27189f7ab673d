package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGCAndRestore drives memtool gc and restore, with the expiry policy,
// on a file store whose access index (written by package expiry) says two
// files were last used 40 days ago and one an hour ago.
func TestGCAndRestore(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	policy := writePolicy(t, `{"expiry":true}`)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runBinary(t, "", append(args, "--store", dir, "--policy", policy)...)
	}
	for _, p := range []string{"/memories/old.md", "/memories/d/old2.md", "/memories/new.md"} {
		if _, stderr, code := run("create", "--text", "text of "+p, p); code != 0 {
			t.Fatalf("create %s: %d %s", p, code, stderr)
		}
	}
	now := time.Now().Unix()
	old := now - 40*24*3600
	index, _ := json.Marshal(map[string]any{"version": 1, "access": map[string]int64{"old.md": old, "d/old2.md": old, "new.md": now - 3600}})
	if err := os.WriteFile(filepath.Join(dir, ".memtool-expiry.json"), index, 0o600); err != nil {
		t.Fatal(err)
	}
	oldDay := time.Unix(old, 0).UTC().Format(time.DateOnly)

	out, stderr, code := run("gc", "--unused-for", "30d", "--dry-run")
	want := "would expire /memories/d/old2.md (last used " + oldDay + ")\nwould expire /memories/old.md (last used " + oldDay + ")\n"
	if code != 0 || out != want {
		t.Fatalf("dry run: exit %d, stderr %q\n got %q\nwant %q", code, stderr, out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "old.md")); err != nil {
		t.Fatalf("dry run removed a file: %v", err)
	}

	out, _, code = run("gc", "--unused-for", "30d")
	if code != 0 || out != strings.ReplaceAll(want, "would expire", "expired") {
		t.Fatalf("gc: exit %d, %q", code, out)
	}
	for name, want := range map[string]bool{"old.md": false, "d/old2.md": false, "new.md": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("after gc, %s exists: %v, want %v", name, err == nil, want)
		}
	}
	if out, _, _ := run("view", "/memories"); strings.Contains(out, "old") || strings.Contains(out, ".memtool") {
		t.Errorf("listing after gc shows the trash or expired files:\n%s", out)
	}

	out, _, code = run("restore", "--list")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "/memories/old.md (expired ") {
		t.Errorf("restore --list: exit %d, %q", code, out)
	}
	out, stderr, code = run("restore", "/memories/old.md")
	if code != 0 || !strings.HasPrefix(out, "restored /memories/old.md") {
		t.Fatalf("restore: exit %d, %q, %q", code, out, stderr)
	}
	if out, _, _ := run("view", "/memories/old.md"); !strings.Contains(out, "text of /memories/old.md") {
		t.Errorf("restored file reads %q", out)
	}
	if out, _, _ := run("restore", "--list"); strings.Contains(out, "/memories/old.md") {
		t.Errorf("the restored file is still in the trash: %q", out)
	}
	if _, stderr, code := run("restore", "/memories/old.md"); code != exitFailed || !strings.Contains(stderr, "not in the trash") {
		t.Errorf("restore twice: exit %d, %q", code, stderr)
	}
	if _, stderr, code := run("gc", "--unused-for", "soon"); code != exitUsage || !strings.Contains(stderr, "--unused-for") {
		t.Errorf("bad --unused-for: exit %d, %q", code, stderr)
	}
}

func TestParseDays(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseDays(in); err != nil || got != want {
			t.Errorf("parseDays(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "xd", "30", "-1d"} {
		if _, err := parseDays(bad); err == nil {
			t.Errorf("parseDays(%q) accepted", bad)
		}
	}
}

// TestGCRefusesBelowResolution: the access index records a use at most
// once an hour per file and process, so gc --unused-for below an hour
// could expire a file edited a moment ago. Such a value is refused before
// the store is touched.
func TestGCRefusesBelowResolution(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	if _, stderr, code := runBinary(t, "", "create", "--store", dir, "--text", "just written", "/memories/a.md"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	for _, short := range []string{"1s", "59m", "0d59m"} {
		_, stderr, code := runBinary(t, "", "gc", "--store", dir, "--unused-for", short)
		if code != exitUsage || !strings.Contains(stderr, "below the resolution of the access index (1h)") {
			t.Errorf("gc --unused-for %s: exit %d, %q; want a usage error naming the resolution", short, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.md")); err != nil {
		t.Fatalf("the refused gc moved the file: %v", err)
	}
	policy := writePolicy(t, `{"expiry":true}`)
	if out, stderr, code := runBinary(t, "", "gc", "--store", dir, "--policy", policy, "--unused-for", "1h"); code != 0 || out != "" {
		t.Errorf("gc --unused-for 1h: exit %d, %q, %q; want nothing expired", code, out, stderr)
	}
}

// TestGCDryRunRecordsNothing: gc --dry-run changes nothing, also with a
// policy the store does not record yet: it once wrote the policy record,
// after which the store refused every command without that policy.
func TestGCDryRunRecordsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "memories")
	mustRunCLI(t, nil, "", "create", "--store", store, "--text", "tea", "/memories/a.md")
	policy := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"expiry":true,"history":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	before := diskTree(t, store)
	if _, stderr, code := runCLI(t, map[string]string{"MEMTOOL_POLICY": policy}, "", "gc", "--store", store, "--unused-for", "1d", "--dry-run"); code != exitOK {
		t.Fatalf("gc --dry-run: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(store, recordName)); err == nil {
		t.Errorf("gc --dry-run wrote the policy record")
	}
	if after := diskTree(t, store); !slices.Equal(after, before) {
		t.Errorf("gc --dry-run changed the store: %q", after)
	}
	if _, stderr, code := runCLI(t, nil, "", "view", "--store", store, "/memories/a.md"); code != exitOK {
		t.Errorf("view without the policy after gc --dry-run: exit %d, %s", code, stderr)
	}
	// A policy that lacks what the store records is still refused.
	mustRunCLI(t, map[string]string{"MEMTOOL_POLICY": policy}, "", "view", "--store", store, "/memories/a.md")
	if _, stderr, code := runCLI(t, nil, "", "gc", "--store", store, "--unused-for", "1d", "--dry-run"); code != exitStore || !strings.Contains(stderr, "policy mismatch") {
		t.Errorf("gc --dry-run without the recorded policy: exit %d, %s", code, stderr)
	}
}

// With the history policy, gc also drops the versions past its max_age
// that no change of their file dropped: a deleted file's. A dry run lists
// them and drops nothing.
func TestGCDropsAgedVersions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"history":{"max_age":"1s"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		return mustRunCLI(t, nil, "", append(args, "--store", dir, "--policy", policy)...)
	}
	run("create", "--text", "one", "/memories/gone.md")
	run("str_replace", "--old", "one", "--new", "two", "/memories/gone.md")
	run("delete", "/memories/gone.md")
	// A deleted file whose versions' directory lost the file naming its
	// path (damaged): gc names it so, not with an empty path.
	run("create", "--text", "one", "/memories/lost.md")
	run("delete", "/memories/lost.md")
	named, _ := filepath.Glob(filepath.Join(dir, ".memtool-*", "*", "path"))
	for _, n := range named {
		if data, _ := os.ReadFile(n); string(data) == "lost.md" {
			os.Remove(n)
		}
	}
	// Waits for the versions to pass max_age: a condition of the clock,
	// not a measure of speed.
	time.Sleep(1100 * time.Millisecond)
	out := run("gc", "--unused-for", "30d", "--dry-run")
	if strings.Count(out, "would drop version ") != 3 || !strings.Contains(out, "of /memories/gone.md (from ") || !strings.Contains(out, "of a file whose path history does not know (from ") {
		t.Errorf("gc --dry-run: %q", out)
	}
	out = run("gc", "--unused-for", "30d")
	if strings.Count(out, "dropped version ") != 3 {
		t.Errorf("gc: %q", out)
	}
	_, errOut, code := runCLI(t, nil, "", "history", "--store", dir, "--policy", policy, "/memories/gone.md")
	if code != exitOK || !strings.Contains(errOut, "no earlier versions") {
		t.Errorf("history after gc: exit %d, %q", code, errOut)
	}
	_, errOut, _ = runCLI(t, nil, "", "gc", "--store", dir, "--policy", policy, "--unused-for", "30d")
	if !strings.Contains(errOut, "no version older than 1s") {
		t.Errorf("gc with nothing left: %q", errOut)
	}
}

// gc --reset-index removes an access index that cannot be read (gc fails
// on it, and no use is recorded), and leaves a readable one.
func TestGCResetIndex(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"expiry":true}`)}
	mustRunCLI(t, vars, "", "create", "--store", dir, "--text", "x", "/memories/a.md")
	if err := os.WriteFile(filepath.Join(dir, ".memtool-expiry.json"), []byte(`{"version":1,"acc`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, vars, "", "gc", "--store", dir, "--unused-for", "30d"); code != exitFailed {
		t.Fatalf("gc over a damaged index: exit %d, %q", code, errOut)
	}
	_, errOut, code := runCLI(t, vars, "", "gc", "--store", dir, "--reset-index")
	if code != exitOK || !strings.Contains(errOut, "uses are recorded again") {
		t.Errorf("gc --reset-index: exit %d, %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, vars, "", "gc", "--store", dir, "--unused-for", "30d"); code != exitOK {
		t.Errorf("gc after the reset: exit %d, %q", code, errOut)
	}
	mustRunCLI(t, vars, "", "view", "--store", dir, "/memories/a.md") // records a use: a readable index
	if _, errOut, code := runCLI(t, vars, "", "gc", "--store", dir, "--reset-index"); code != exitFailed || !strings.Contains(errOut, "reads as it should") {
		t.Errorf("gc --reset-index of a readable index: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(t, vars, "", "gc", "--store", dir, "--reset-index", "--unused-for", "30d"); code != exitUsage {
		t.Errorf("--reset-index with --unused-for: exit %d", code)
	}
}

// TestGCRefusesWithoutExpiryPolicy: gc without the expiry policy in force
// (a cron job without --policy, on a store that records none) is refused
// and changes nothing. It once ran: its first run wrote an access index
// saying every file was used then, no process recorded a use later, and a
// later run expired a file edited a moment before. --dry-run and
// --reset-index, which expire nothing, still run.
func TestGCRefusesWithoutExpiryPolicy(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	mustRunCLI(t, nil, "", "create", "--store", dir, "--text", "used every day\n", "/memories/daily.md")
	before := diskTree(t, dir)
	_, stderr, code := runCLI(t, nil, "", "gc", "--store", dir, "--unused-for", "1h")
	if code != exitUsage || !strings.Contains(stderr, `gc needs the expiry policy ("expiry": true`) {
		t.Errorf("gc without a policy: exit %d, %q; want it refused for want of the expiry policy", code, stderr)
	}
	if after := diskTree(t, dir); !slices.Equal(after, before) {
		t.Errorf("the refused gc changed the store: %q, was %q", after, before)
	}
	// With the history policy alone, gc drops aged versions and neither
	// expires a file nor writes an access index.
	history := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"history":{}}`)}
	kept := filepath.Join(t.TempDir(), "memories")
	mustRunCLI(t, history, "", "create", "--store", kept, "--text", "old\n", "/memories/old.md")
	if _, stderr, code := runCLI(t, history, "", "gc", "--store", kept, "--unused-for", "1h"); code != exitOK || strings.Contains(stderr, "unused") {
		t.Errorf("gc with the history policy alone: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(kept, ".memtool-expiry.json")); err == nil {
		t.Error("gc with the history policy alone wrote an access index")
	}
	if _, stderr, code := runCLI(t, nil, "", "gc", "--store", dir, "--unused-for", "1h", "--dry-run"); code != exitOK {
		t.Errorf("gc --dry-run without the policy: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, nil, "", "gc", "--store", dir, "--reset-index"); code != exitOK {
		t.Errorf("gc --reset-index without the policy: exit %d, %q", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "typo")
	if _, _, code := runCLI(t, nil, "", "gc", "--store", missing, "--unused-for", "1h"); code == exitOK {
		t.Errorf("gc without the policy on a store that is not there: exit 0")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("the refused gc created the store")
	}
	// With the policy, a file used since the last run stays.
	vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"expiry":true}`)}
	mustRunCLI(t, vars, "", "gc", "--store", dir, "--unused-for", "1h")
	then := time.Now().Add(-3 * time.Hour).Unix()
	idx, _ := json.Marshal(map[string]any{"version": 1, "access": map[string]int64{"daily.md": then}})
	if err := os.WriteFile(filepath.Join(dir, ".memtool-expiry.json"), idx, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, vars, "", "str_replace", "--store", dir, "--old", "every", "--new", "each", "/memories/daily.md")
	mustRunCLI(t, vars, "", "gc", "--store", dir, "--unused-for", "1h")
	if _, err := os.Stat(filepath.Join(dir, "daily.md")); err != nil {
		t.Errorf("gc expired /memories/daily.md, edited a moment ago: %v", err)
	}
}

// TestRestoreThroughPolicies: restore writes the file back through every
// policy in force, as any other write. A store whose limits allow two
// entries (files and directories) refuses a third, restored one, which
// stays in the trash; once there is room it comes back. The audit log records gc's move to the
// trash and the restore.
func TestRestoreThroughPolicies(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "memories")
	auditLog := filepath.Join(tmp, "audit.jsonl")
	vars := map[string]string{"MEMTOOL_POLICY": writePolicy(t, fmt.Sprintf(`{"limits": {"max_files": 2}, "audit": %q, "expiry": true}`, auditLog))}
	mustRunCLI(t, vars, "", "create", "--store", dir, "--text", "old\n", "/memories/d/old.md")
	idx, _ := json.Marshal(map[string]any{"version": 1, "access": map[string]int64{"d/old.md": time.Now().Add(-40 * 24 * time.Hour).Unix()}})
	if err := os.WriteFile(filepath.Join(dir, ".memtool-expiry.json"), idx, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, vars, "", "gc", "--store", dir, "--unused-for", "30d")
	mustRunCLI(t, vars, "", "create", "--store", dir, "--text", "new\n", "/memories/new.md")

	_, stderr, code := runCLI(t, vars, "", "restore", "--store", dir, "/memories/d/old.md")
	if code != exitFailed || !strings.Contains(stderr, "stays in the trash") || !strings.Contains(stderr, "Limit exceeded") {
		t.Errorf("restore past max_files 2: exit %d, %q; want it refused by the limit", code, stderr)
	}
	if view := mustRunCLI(t, vars, "", "view", "--store", dir, "/memories"); strings.Contains(view, "old.md") {
		t.Errorf("restore brought back a file past max_files 2:\n%s", view)
	}
	if list := mustRunCLI(t, vars, "", "restore", "--store", dir, "--list"); !strings.Contains(list, "/memories/d/old.md") {
		t.Errorf("the refused file left the trash: %q", list)
	}

	mustRunCLI(t, vars, "", "delete", "--store", dir, "/memories/new.md")
	if out := mustRunCLI(t, vars, "", "restore", "--store", dir, "/memories/d/old.md"); !strings.HasPrefix(out, "restored /memories/d/old.md (expired ") {
		t.Errorf("restore: %q", out)
	}
	if got := mustRunCLI(t, vars, "", "view", "--store", dir, "/memories/d/old.md"); !strings.Contains(got, "old") {
		t.Errorf("the restored file reads %q", got)
	}
	if list, _, _ := runCLI(t, vars, "", "restore", "--store", dir, "--list"); list != "" {
		t.Errorf("the restored file is still in the trash: %q", list)
	}
	log, _ := os.ReadFile(auditLog)
	for _, want := range []string{
		`"op":"rename","path":"/memories/d/old.md","new_path":"/memories/.memtool-expiry-trash/`, // gc's move
		`"op":"create","path":"/memories/d/old.md","outcome":"refused"`,                          // the refused restore
		`"op":"create","path":"/memories/d/old.md","outcome":"ok"`,                               // the restore
		`"op":"remove","path":"/memories/.memtool-expiry-trash/`,                                 // its copy in the trash
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the audit log has no %s:\n%s", want, log)
		}
	}
}

// TestRestoreRedactedKeepsTrashCopy: a file restored under the secrets
// policy's redact comes back redacted, and its copy in the trash, as it
// was, stays there until gc purges its batch: no byte of it is lost.
func TestRestoreRedactedKeepsTrashCopy(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memories")
	plain := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"expiry":true}`)}
	secret := "key AKIA" + "IOSFODNN7EXAMPLE\n"
	mustRunCLI(t, plain, "", "create", "--store", dir, "--text", secret, "/memories/k.md")
	idx, _ := json.Marshal(map[string]any{"version": 1, "access": map[string]int64{"k.md": time.Now().Add(-40 * 24 * time.Hour).Unix()}})
	if err := os.WriteFile(filepath.Join(dir, ".memtool-expiry.json"), idx, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, plain, "", "gc", "--store", dir, "--unused-for", "30d")
	redact := map[string]string{"MEMTOOL_POLICY": writePolicy(t, `{"expiry":true,"secrets":"redact"}`)}
	out, stderr, code := runCLI(t, redact, "", "restore", "--store", dir, "/memories/k.md")
	if code != exitOK || !strings.HasPrefix(out, "restored /memories/k.md") || !strings.Contains(stderr, "its copy there stays") {
		t.Errorf("restore under redact: exit %d, %q, %q", code, out, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "k.md")); strings.Contains(string(data), "AKIA") {
		t.Errorf("the restored file holds the secret: %q", data)
	}
	if list := mustRunCLI(t, plain, "", "restore", "--store", dir, "--list"); !strings.Contains(list, "/memories/k.md") {
		t.Errorf("the copy as it was left the trash: %q", list)
	}
}
