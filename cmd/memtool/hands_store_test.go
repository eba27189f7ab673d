package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool/claude/claudetest"
)

// A directory store is read-only to --workdir's file tools however the
// two paths are spelt: a relative --store, a work directory reached
// through a symbolic link, and a work directory inside the store. The
// model's write into the memory directory is refused and the file keeps
// what memtool wrote.
func TestWorkdirCannotWriteStore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		setup        func(t *testing.T, cwd string)
		store, work  string
		target, file string // what the model writes; the memory file it would change
	}{
		{"relative store", func(t *testing.T, cwd string) {
			os.MkdirAll(filepath.Join(cwd, "proj"), 0o700)
		}, "proj/memories", "proj", "memories/progress.md", "proj/memories/progress.md"},
		{"work directory through a link", func(t *testing.T, cwd string) {
			os.MkdirAll(filepath.Join(cwd, "real"), 0o700)
			if err := os.Symlink("real", filepath.Join(cwd, "link")); err != nil {
				t.Fatal(err)
			}
		}, "real/memories", "link", "memories/progress.md", "real/memories/progress.md"},
		{"work directory inside the store", func(t *testing.T, cwd string) {
			os.MkdirAll(filepath.Join(cwd, "mem", "proj"), 0o700)
		}, "mem", "mem/proj", "../progress.md", "mem/progress.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cwd := t.TempDir()
			c.setup(t, cwd)
			srv := claudetest.NewServer(
				claudetest.Turn{Calls: []claudetest.ToolUse{
					{Input: `{"command":"create","path":"/memories/progress.md","file_text":"kept\n"}`},
				}},
				claudetest.Turn{Calls: []claudetest.ToolUse{
					{Name: "write", Input: `{"file_path":"` + c.target + `","content":"overwritten\n"}`},
					{Name: "write", Input: `{"file_path":"planted.md","content":"planted\n"}`},
				}},
				claudetest.Turn{Text: "Done."},
			)
			defer srv.Close()
			cmd := exec.Command(claudeBinary(t), "run", "--store", c.store, "--workdir", c.work, "Work.")
			cmd.Dir = cwd
			cmd.Env = apiEnv(srv)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("memtool run: %v\n%s", err, errOut.String())
			}
			if err := srv.Refusals(); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(filepath.Join(cwd, c.file)); err != nil || string(data) != "kept\n" {
				t.Errorf("%s = %q, %v; want what memtool wrote, %q", c.file, data, err, "kept\n")
			}
			if c.name == "work directory inside the store" {
				if _, err := os.Stat(filepath.Join(cwd, c.work, "planted.md")); err == nil {
					t.Error("a file tool wrote planted.md into the store, past the path gate and the policies")
				}
			}
		})
	}
}
