package workdir_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memtool/memtool/claude/workdir"
)

// A write through a link to the work directory by its absolute path (which
// os.Root will not follow, though the SDK does) is refused like a write to
// "." and makes no file beside the work directory.
func TestWriteThroughAbsoluteLinkToWorkDir(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(work, filepath.Join(work, "abs")); err != nil {
		t.Fatal(err)
	}
	// Relative, but out of the work directory and back in.
	if err := os.Symlink("../work", filepath.Join(work, "around")); err != nil {
		t.Fatal(err)
	}
	hands, err := workdir.Open(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	watch := watchCreates(t, root)
	for _, p := range []string{"abs", "abs/", filepath.Join(work, "abs"), "around"} {
		in, _ := json.Marshal(map[string]string{"file_path": p, "content": "x"})
		out, ok := execTool(t, hands, "write", string(in))
		if ok || !strings.Contains(out, "is a directory") {
			t.Errorf("write %q: %q (ok %v), want it refused as a directory", p, out, ok)
		}
		if made := watch(); len(made) != 0 {
			t.Errorf("write %q made %q beside the work directory", p, made)
		}
	}
}

// A grep through a link to a FIFO in the work directory by its absolute
// path, or by a relative path that passes outside it, is refused and never
// opens the FIFO (a writer stands ready, so a grep that opened it reads
// what it says); through such a link to a regular file, grep still runs.
func TestGrepFIFOThroughAbsoluteLink(t *testing.T) {
	needRG(t)
	work := t.TempDir()
	fifo := filepath.Join(work, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("a SECRET in a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"abslink":  fifo,
		"around":   filepath.Join("..", filepath.Base(work), "fifo"),
		"filelink": filepath.Join(work, "notes.txt"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	hands, err := workdir.Open(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	for _, p := range []string{"abslink", "around", filepath.Join(work, "abslink")} {
		out, ok := grepFIFO(t, hands, fifo, p)
		if ok || !strings.Contains(out, "not a regular file") {
			t.Errorf("grep in %q: %q (ok %v), want a refusal", p, out, ok)
		}
	}
	in, _ := json.Marshal(map[string]string{"pattern": "SECRET", "path": "filelink"})
	if out, ok := execTool(t, hands, "grep", string(in)); !ok || !strings.Contains(out, "SECRET in a file") {
		t.Errorf("grep in a link to a regular file: %q (ok %v)", out, ok)
	}
}
