package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/filestore"
	versions "github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/remotetest"
	"github.com/memtool/memtool/remotestore"
)

// TestMigrateFromServerNeedsMemoryOnly: a memtool server serves the text
// of its files and keeps its versions, encryption and policy record to
// itself, so migrate from it is refused, copying nothing, unless
// --memory-only says that the files alone are wanted; the summary then
// says what was not copied. Migrate once copied the live files' text of
// an encrypted store with history and reported success as for a whole
// store. --memory-only is refused for any other source.
func TestMigrateFromServerNeedsMemoryOnly(t *testing.T) {
	tmp := t.TempDir()
	served, copyDir := filepath.Join(tmp, "served"), filepath.Join(tmp, "copy")
	fs, err := filestore.Open(served, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	key, err := encrypt.NewKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encrypt.New(fs, []encrypt.Key{key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stack := versions.New(enc, nil)
	for _, v := range []string{"v1\n", "v2\n"} {
		if err := stack.WriteFile(context.Background(), "diary.md", []byte(v), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	url := remotetest.Server(t, stack, remoteToken)
	t.Setenv(remotestore.TokenEnv, remoteToken)

	out, stderr, code := runCLI(t, nil, "", "migrate", "--from", url, "--to", copyDir)
	if code != exitUsage || out != "" || !strings.Contains(stderr, "is a memtool server") || !strings.Contains(stderr, "--memory-only") {
		t.Errorf("migrate from a server: exit %d, %q, %q; want it refused, naming --memory-only", code, out, stderr)
	}
	if _, err := os.Stat(copyDir); err == nil {
		t.Errorf("the refused migrate made the target")
	}

	out, stderr, code = runCLI(t, nil, "", "migrate", "--from", url, "--to", copyDir, "--memory-only")
	if code != exitOK || !strings.Contains(out, "copied 1 file") || !strings.Contains(out, "the server's policies and their data (history versions, the access index and trash, encryption, the policy record) were not") {
		t.Errorf("migrate --memory-only: exit %d, %q, %q; want the summary to say what was not copied", code, out, stderr)
	}
	if data, err := os.ReadFile(filepath.Join(copyDir, "diary.md")); err != nil || string(data) != "v2\n" {
		t.Errorf("the copy's diary.md: %q, %v", data, err)
	}

	_, stderr, code = runCLI(t, nil, "", "migrate", "--from", copyDir, "--to", filepath.Join(tmp, "again"), "--memory-only")
	if code != exitUsage || !strings.Contains(stderr, "--memory-only is for a --from that is a memtool server") {
		t.Errorf("--memory-only from a directory: exit %d, %q", code, stderr)
	}
}
