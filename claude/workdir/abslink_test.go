package workdir_test

import (
	"encoding/json"
	"os"
	"os/exec"
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
	if _, err := exec.LookPath("rg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no rg on PATH: .ci/run installs ripgrep so that this test runs under CI")
		}
		t.Skip("no rg on PATH: the built-in search skips FIFOs")
	}
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
		written := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until a reader opens it
			if err == nil {
				_, err = f.WriteString("SECRET from the pipe\n")
				f.Close()
			}
			written <- err
		}()
		in, _ := json.Marshal(map[string]string{"pattern": "SECRET", "path": p})
		out, ok := execTool(t, hands, "grep", string(in))
		if ok || !strings.Contains(out, "not a regular file") {
			t.Errorf("grep in %q: %q (ok %v), want a refusal", p, out, ok)
		}
		// Release the writer if the grep left it waiting.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-written
			r.Close()
		} else {
			t.Fatal(err)
		}
	}
	in, _ := json.Marshal(map[string]string{"pattern": "SECRET", "path": "filelink"})
	if out, ok := execTool(t, hands, "grep", string(in)); !ok || !strings.Contains(out, "SECRET in a file") {
		t.Errorf("grep in a link to a regular file: %q (ok %v)", out, ok)
	}
}
