package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	versions "github.com/memtool/memtool/history"
)

// runClosedStdout runs the memtool binary with env, stdin and args, its
// stdout a pipe whose reader is closed, and returns its exit status and
// stderr.
func runClosedStdout(t *testing.T, env []string, stdin string, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	cmd := exec.Command(memtoolBinary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	checkNoRace(t, stderr.String())
	if cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// The commands that change something and then report it on stdout (restore,
// revert, rekey, keys revoke) exit with status 4 when the report cannot be
// written, as view, create and exec do: exit status 0 says the report was
// given. The change itself is made.
func TestChangeReportToClosedStdout(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()

	hist := filepath.Join(tmp, "hist")
	runThrough(t, hist, func(s memtool.Store) memtool.Store { return versions.New(s, nil) },
		`{"command":"create","path":"/memories/n.md","file_text":"one"}`,
		`{"command":"str_replace","path":"/memories/n.md","old_str":"one","new_str":"two"}`,
	)
	trash := filepath.Join(tmp, "trash")
	mustRunCLI(t, nil, "", "create", "--store", trash, "--text", "old", "/memories/old.md")
	index, _ := json.Marshal(map[string]any{"version": 1, "access": map[string]int64{"old.md": time.Now().Unix() - 40*24*3600}})
	if err := os.WriteFile(filepath.Join(trash, ".memtool-expiry.json"), index, 0o600); err != nil {
		t.Fatal(err)
	}
	expiring := writePolicy(t, `{"expiry":true}`)
	mustRunCLI(t, map[string]string{"MEMTOOL_POLICY": expiring}, "", "gc", "--store", trash, "--unused-for", "30d")
	sealed := filepath.Join(tmp, "sealed")
	oldKey, _ := encrypt.NewKey("old")
	newKey, _ := encrypt.NewKey("new")
	runThrough(t, sealed, encryptedWith(t, oldKey), `{"command":"create","path":"/memories/s.md","file_text":"secret"}`)
	keyed := filepath.Join(tmp, "keyed")
	out := mustRunCLI(t, nil, "", "keys", "add", "--store", keyed, "--tenant", "a")
	id := regexp.MustCompile(`Added key (\S+) `).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("keys add printed %q", out)
	}

	for _, c := range []struct {
		env   []string
		args  []string
		check func() bool // the change was made
	}{
		{nil, []string{"revert", "--store", hist, "--policy", writePolicy(t, `{"history":{}}`), "/memories/n.md", "--to", "1"}, func() bool {
			b, err := os.ReadFile(filepath.Join(hist, "n.md"))
			return err == nil && string(b) == "one"
		}},
		{nil, []string{"restore", "--store", trash, "--policy", expiring, "/memories/old.md"}, func() bool {
			_, err := os.Stat(filepath.Join(trash, "old.md"))
			return err == nil
		}},
		{[]string{"MEMTOOL_KEY=" + newKey.Text() + "," + oldKey.Text()}, []string{"rekey", "--store", sealed}, func() bool {
			_, _, code := runMemtoolEnv(t, []string{"MEMTOOL_KEY=" + newKey.Text()}, "view", "--store", sealed, "--policy", writePolicy(t, `{"encrypt":true}`), "/memories/s.md")
			return code == exitOK
		}},
		{nil, []string{"keys", "revoke", "--store", keyed, id[1]}, func() bool {
			return strings.Contains(mustRunCLI(t, nil, "", "keys", "list", "--store", keyed), "revoked")
		}},
	} {
		code, stderr := runClosedStdout(t, childEnv(c.env...), "", c.args...)
		if code != exitBrokenIO {
			t.Errorf("memtool %s with a closed stdout: exit %d, want %d\nstderr: %s", c.args[0], code, exitBrokenIO, stderr)
		}
		if !c.check() {
			t.Errorf("memtool %s with a closed stdout made no change", c.args[0])
		}
	}
}

// writePolicy writes a policy file and returns its name.
func writePolicy(t *testing.T, policy string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(name, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}
