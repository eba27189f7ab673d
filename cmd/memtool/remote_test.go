package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/filestore"
	referencebattery "github.com/memtool/memtool/internal/battery"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/remotestore"
)

const remoteToken = "remote-test-token-0123"

// memoryServer serves the directory store dir over the resource API on
// loopback, to requests with remoteToken, and returns its URL.
func memoryServer(t *testing.T, dir string) string {
	t.Helper()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return remotetest.Server(t, s, remoteToken)
}

// remoteEnv is the environment of a child that reaches the server.
func remoteEnv() []string { return childEnv(remotestore.TokenEnv + "=" + remoteToken) }

// TestRemoteExec runs the reference battery through `memtool exec
// --store https://…` (here http on loopback) and through `memtool exec`
// on a directory: the answers are the same, line for line, and the
// server's directory ends as the local one.
func TestRemoteExec(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	remoteDir, localDir := filepath.Join(tmp, "served"), filepath.Join(tmp, "local")
	url := memoryServer(t, remoteDir)
	var stdin strings.Builder
	for _, in := range referencebattery.Inputs(t) {
		stdin.Write(in)
		stdin.WriteByte('\n')
	}
	want, errOut, code := runMemtool(t, childEnv(), stdin.String(), "exec", "--store", localDir)
	if code != 0 {
		t.Fatalf("local exec: exit %d: %s", code, errOut)
	}
	got, errOut, code := runMemtool(t, remoteEnv(), stdin.String(), "exec", "--store", url)
	if code != 0 {
		t.Fatalf("remote exec: exit %d: %s", code, errOut)
	}
	wantLines, gotLines := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(gotLines) != len(wantLines) || len(wantLines) < 100 {
		t.Fatalf("%d answer lines, want %d", len(gotLines), len(wantLines))
	}
	for i := range wantLines {
		if gotLines[i] != wantLines[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, gotLines[i], wantLines[i])
		}
	}
	sameTree(t, diskTree(t, remoteDir), diskTree(t, localDir))

	// A wrong token: the command fails, says what to fix, never shows it.
	env := childEnv(remotestore.TokenEnv + "=not-the-token-789")
	_, errOut, code = runMemtool(t, env, "", "view", "--store", url, "/memories")
	if code == 0 || !strings.Contains(errOut, remotestore.TokenEnv) || strings.Contains(errOut, "not-the-token-789") {
		t.Errorf("view with a wrong token: exit %d, stderr %q", code, errOut)
	}
}

// TestRemoteMigrate copies a memory to a memtool server and back with
// `memtool migrate` (from the server: --memory-only, see
// TestMigrateFromServerNeedsMemoryOnly), and runs the other subcommands
// that read a store against the server.
func TestRemoteMigrate(t *testing.T) {
	t.Parallel()
	tmp, src := seededSource(t, "")
	served, back := filepath.Join(tmp, "served"), filepath.Join(tmp, "back")
	url := memoryServer(t, served)
	for _, step := range [][]string{{src, url}, {url, back, "--memory-only"}} {
		out, errOut, code := runMemtool(t, remoteEnv(), "", append([]string{"migrate", "--from", step[0], "--to", step[1]}, step[2:]...)...)
		if code != 0 || !strings.Contains(out, "copied 6 files (1.0 MiB) and 7 directories") {
			t.Fatalf("migrate %s → %s: exit %d\nstdout: %s\nstderr: %s", step[0], step[1], code, out, errOut)
		}
	}
	sameTree(t, diskTree(t, served), diskTree(t, src))
	sameTree(t, diskTree(t, back), diskTree(t, src))

	for _, args := range [][]string{
		{"view", "--store", url, "/memories/top.md"},
		{"info", "--store", url},
		{"create", "--store", url, "--text", "new\n", "/memories/new.md"},
		{"rename", "--store", url, "/memories/new.md", "/memories/notes/new.md"},
		{"delete", "--store", url, "/memories/notes/new.md"},
	} {
		out, errOut, code := runMemtool(t, remoteEnv(), "", args...)
		if code != 0 {
			t.Errorf("memtool %s: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
	}
}

// TestRemoteInHelp: the help text says a store may be a memtool server,
// and where its token comes from.
func TestRemoteInHelp(t *testing.T) {
	t.Parallel()
	out, _, _ := runMemtool(t, childEnv(), "", "help")
	if !strings.Contains(out, "https://host") || !strings.Contains(out, "$"+remotestore.TokenEnv) {
		t.Errorf("memtool help does not show the remote store:\n%s", out)
	}
}
