package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// The CLI as a new user expects it: help, version, info, tenants,
// completion, and messages that say what happened. These tests call run in
// this process (see runCLI); the scripts in testdata/script drive the
// binary.

// runCLI runs memtool in this process with the environment vars (nothing
// else of this process's) and stdin, and returns what it wrote and its
// exit status.
func runCLI(t testing.TB, vars map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code = runWithEnv(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// mustRunCLI is runCLI that fails t unless memtool exits 0.
func mustRunCLI(t testing.TB, vars map[string]string, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, vars, stdin, args...)
	if code != exitOK {
		t.Fatalf("memtool %v: exit %d\nstderr: %s", args, code, errOut)
	}
	return out
}

// Every command's help comes from memtool help NAME and from NAME -h, on
// stdout with exit status 0, and lists only the flags the command takes.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		out, errOut, code := runCLI(t, nil, "", "help", c.name)
		if code != exitOK || errOut != "" || !strings.HasPrefix(out, "Usage: memtool "+c.name) {
			t.Errorf("memtool help %s: exit %d, stderr %q, stdout %q", c.name, code, errOut, out)
		}
		out2, errOut, code := runCLI(t, nil, "", c.name, "-h")
		if code != exitOK || errOut != "" || out2 != out {
			t.Errorf("memtool %s -h: exit %d, stderr %q, stdout differs from memtool help %s:\n%s", c.name, code, errOut, c.name, out2)
		}
		if c.leftOut != "" {
			if !strings.Contains(out, "rebuild with -tags "+c.leftOut) || strings.Contains(out, "Flags:") {
				t.Errorf("memtool help %s, left out of this build: no flags, and how to get it, wanted:\n%s", c.name, out)
			}
			continue
		}
		if strings.Contains(out, "-overwrite") != contains([]string{"create", "exec", "run", "chat", "serve", "mcp"}, c.name) {
			t.Errorf("memtool %s -h and --overwrite:\n%s", c.name, out)
		}
	}
	if _, errOut, code := runCLI(t, nil, "", "help", "nope"); code != exitUsage || !strings.Contains(errOut, `unknown command "nope"`) {
		t.Errorf("memtool help nope: exit %d, %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out := mustRunCLI(t, nil, "", "version")
	if !strings.HasPrefix(out, "memtool ") || !strings.Contains(out, "go1") {
		t.Errorf("memtool version: %q", out)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	if got, want := versionLine(bi), "memtool v1.2.3 (revision abc123, 2026-11-30T10:00:00Z, with uncommitted changes), go1.99"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	if got, want := versionLine(&debug.BuildInfo{GoVersion: "go1.99"}), "memtool (devel), go1.99"; got != want {
		t.Errorf("versionLine without VCS = %q, want %q", got, want)
	}
}

func TestInfoAndTenants(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	policy := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policy, []byte(`{"history": {}, "secrets": "reject"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"MEMTOOL_POLICY": policy}
	mustRunCLI(t, vars, "", "create", "--store", dir, "--text", "tea", "/memories/a.md")
	mustRunCLI(t, vars, "", "create", "--store", dir, "--text", "coffee", "/memories/d/b.md")
	out := mustRunCLI(t, vars, "", "info", "--store", dir)
	for _, want := range []string{
		"store:      " + dir + " (a directory)\n",
		"tenancy:    one memory, no tenants\n",
		"policies:   secrets (reject), history (from " + policy + ")\n",
		"encryption: off\n",
		"memory:     2 files, 1 directory, 9 bytes\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("memtool info lacks %q:\n%s", want, out)
		}
	}
	// A single-tenant store has no tenants to list.
	if out, errOut, code := runCLI(t, nil, "", "tenants", "--store", dir); code != exitStore || out != "" || !strings.Contains(errOut, "has no tenants") {
		t.Errorf("memtool tenants on a single-tenant store: exit %d, %q, %q", code, out, errOut)
	}

	multi := filepath.Join(t.TempDir(), "multi")
	for _, id := range []string{"bob", "alice"} {
		mustRunCLI(t, nil, "", "create", "--store", multi, "--tenant", id, "--text", "x", "/memories/x.md")
	}
	if out := mustRunCLI(t, nil, "", "tenants", "--store", multi); out != "alice\nbob\n" {
		t.Errorf("memtool tenants: %q, want alice and bob, one per line", out)
	}
	if out := mustRunCLI(t, nil, "", "info", "--store", multi); !strings.Contains(out, "multi-tenant, 2 tenants") {
		t.Errorf("memtool info on a multi-tenant store:\n%s", out)
	}
	if out := mustRunCLI(t, nil, "", "info", "--store", multi, "--tenant", "bob"); !strings.Contains(out, "tenant bob") || !strings.Contains(out, "1 file, 0 directories, 1 byte") {
		t.Errorf("memtool info --tenant bob:\n%s", out)
	}
	// An empty store: nothing to list, and it says so.
	empty := t.TempDir()
	if out, errOut, code := runCLI(t, nil, "", "tenants", "--store", empty); code != exitOK || out != "" || !strings.Contains(errOut, "has no tenants") {
		t.Errorf("memtool tenants on an empty store: exit %d, %q, %q", code, out, errOut)
	}
	// Neither creates a store that is not there.
	missing := filepath.Join(t.TempDir(), "typo")
	for _, verb := range []string{"info", "tenants"} {
		if _, errOut, code := runCLI(t, nil, "", verb, "--store", missing); code != exitStore || !strings.Contains(errOut, "does not exist") {
			t.Errorf("memtool %s on a missing store: exit %d, %q", verb, code, errOut)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("info or tenants created %s", missing)
	}
}

// The completion scripts hold every command and each one's flags, and
// parse in their shell where it is installed.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out := mustRunCLI(t, nil, "", "completion", shell)
		for _, c := range commands() {
			if !strings.Contains(out, c.name) {
				t.Errorf("%s completion lacks %s", shell, c.name)
			}
		}
		for _, want := range []string{"range", "overwrite", "all-tenants", "unused-for"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s completion lacks the flag %s", shell, want)
			}
		}
		if path, err := exec.LookPath(shell); err == nil {
			cmd := exec.Command(path, "-n")
			cmd.Stdin = strings.NewReader(out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s -n on the script: %v\n%s\n%s", shell, err, msg, out)
			}
		}
	}
	if _, errOut, code := runCLI(t, nil, "", "completion", "tcsh"); code != exitUsage || !strings.Contains(errOut, "bash, zsh or fish") {
		t.Errorf("memtool completion tcsh: exit %d, %q", code, errOut)
	}
}

// create and insert say that they wait for stdin when it is a terminal,
// and nothing when it is a pipe or a file.
func TestStdinPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, terminal := range []bool{true, false} {
		var out, errb bytes.Buffer
		env := &cliEnv{stdin: strings.NewReader("text\n"), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, stdinTerminal: terminal}
		name := "/memories/t" + map[bool]string{true: "1", false: "2"}[terminal]
		if code := runWithEnv(context.Background(), []string{"create", "--store", dir, name}, env); code != 0 {
			t.Fatalf("create: exit %d, %s", code, errb.String())
		}
		if code := runWithEnv(context.Background(), []string{"insert", "--store", dir, name, "1"}, env); code != 0 {
			t.Fatalf("insert: exit %d, %s", code, errb.String())
		}
		said := strings.Count(errb.String(), "reading the text from stdin")
		if terminal && said != 2 || !terminal && said != 0 {
			t.Errorf("stdin a terminal: %v; stderr %q", terminal, errb.String())
		}
		errb.Reset()
		env.stdin = strings.NewReader("")
		if code := runWithEnv(context.Background(), []string{"log"}, env); code != 0 {
			t.Fatalf("log: exit %d, %s", code, errb.String())
		}
		if said := strings.Contains(errb.String(), "memtool log: reading the log from stdin"); said != terminal {
			t.Errorf("log, stdin a terminal: %v; stderr %q", terminal, errb.String())
		}
	}
}

// Empty results say so, on stderr, with exit status 0 (a log filter that
// matches nothing too: TestLog); a log filter that cannot match is a
// usage error.
func TestEmptyResultsSaySo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, nil, "", "create", "--store", dir, "--text", "x", "/memories/fresh.md")
	out, errOut, code := runCLI(t, nil, "", "gc", "--store", dir, "--unused-for", "30d", "--dry-run")
	if code != exitOK || out != "" || errOut != "memtool gc: nothing would expire or be purged: no file unused for 30d, no trash older than 7d\n" {
		t.Errorf("gc --dry-run with nothing to do: exit %d, %q, %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, nil, "", "restore", "--store", dir, "--list")
	if code != exitOK || out != "" || errOut != "memtool restore: the trash is empty\n" {
		t.Errorf("restore --list on an empty trash: exit %d, %q, %q", code, out, errOut)
	}
	empty := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, nil, "", "log", empty)
	if code != exitOK || out != "" || errOut != "memtool log: the log has no entries\n" {
		t.Errorf("log of an empty log: exit %d, %q, %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"--op", "reed"}, {"--outcome", "okay"}, {"--path", "notes.md"}, {"--tenant", "a/b"},
		{"--since", "2026-11-30T10:00:00Z", "--until", "2026-11-30T09:00:00Z"},
	} {
		_, errOut, code := runCLI(t, nil, "", append([]string{"log"}, args...)...)
		if code != exitUsage || !strings.HasPrefix(errOut, "memtool log: ") {
			t.Errorf("memtool log %v: exit %d, %q", args, code, errOut)
		}
	}
}

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got, want string
	}{
		{plural(0, "file"), "0 files"}, {plural(1, "file"), "1 file"}, {plural(2, "file"), "2 files"},
		{plural(int64(1), "byte"), "1 byte"}, {plural(1, "entry", "entries"), "1 entry"}, {plural(3, "entry", "entries"), "3 entries"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// keygen --out never replaces a file, and points to --rotate.
func TestKeygenOutExisting(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "key")
	mustRunCLI(t, nil, "", "keygen", "--out", name)
	before, _ := os.ReadFile(name)
	_, errOut, code := runCLI(t, nil, "", "keygen", "--out", name)
	if code != exitFailed || !strings.Contains(errOut, "memtool keygen --rotate "+name) {
		t.Errorf("keygen --out onto a key file: exit %d, %q", code, errOut)
	}
	if after, _ := os.ReadFile(name); !bytes.Equal(before, after) {
		t.Errorf("keygen --out changed the existing file")
	}
}

// The progress bar goes back to the start of its line and clears it
// before each drawing, so a shorter line shows nothing of a longer one.
func TestProgressRedraw(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := &progress{w: &b, files: 12, total: 10 << 20}
	p.draw()
	p.add(10 << 20) // a longer line: MiB
	p.total, p.bytes = 10, 0
	p.draw() // a shorter one
	p.done()
	screen := terminalScreen(b.String())
	if len(screen) != 1 {
		t.Fatalf("screen %q, want one line", screen)
	}
	if want := "migrating [                              ] 1/12 files, 0 B/10 B"; screen[0] != want {
		t.Errorf("the bar's line shows %q, want %q", screen[0], want)
	}
}

// terminalScreen returns the lines a terminal shows after s, for the
// sequences progress writes: \r, ESC[K (clear to the end of the line), \n.
func terminalScreen(s string) []string {
	var lines []string
	var line []rune
	col := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\r':
			col = 0
		case s[i] == '\n':
			lines = append(lines, string(line))
			line, col = nil, 0
		case strings.HasPrefix(s[i:], clearLine):
			line = line[:col]
			i += len(clearLine) - 1
		default:
			if col < len(line) {
				line[col] = rune(s[i])
			} else {
				line = append(line, rune(s[i]))
			}
			col++
		}
	}
	if len(line) > 0 {
		lines = append(lines, string(line))
	}
	return lines
}
