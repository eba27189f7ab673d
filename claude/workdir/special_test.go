package workdir_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/memtool/memtool/claude/workdir"
)

// execTool runs the tool called name with input, and returns its text and
// whether it succeeded.
func execTool(t *testing.T, hands *workdir.Tools, name, input string) (string, bool) {
	t.Helper()
	for _, tool := range hands.Tools() {
		if tool.Name() == name {
			content, err := tool.Execute(context.Background(), json.RawMessage(input))
			if err != nil {
				return err.Error(), false
			}
			if len(content) == 0 {
				return "", true
			}
			return content[0].OfText.Text, true
		}
	}
	t.Fatalf("no tool %s", name)
	return "", false
}

// A write whose path leads to the work directory itself is refused without
// a file ever being made beside the work directory: the SDK's write makes
// its temporary file in the target's parent, which for the work directory
// is outside it (and stays there if the process dies before it cleans up).
func TestWriteToWorkDirItself(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"self": ".", "sub/up": ".."} {
		if err := os.Symlink(target, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	hands, err := workdir.Open(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	watch := watchCreates(t, root)
	// Another spelling of the work directory, through a link outside it:
	// run with the work directory as the current directory ("--workdir
	// ."), /proc/self/cwd is a link to it.
	t.Chdir(work)
	for _, p := range []string{".", "./", "sub/..", "self", "self/", "sub/up", work, work + "/sub/..", "../work", "sub/../../work/", "../work/sub/..",
		"/proc/self/cwd", "/proc/self/cwd/sub/.."} {
		in, _ := json.Marshal(map[string]string{"file_path": p, "content": "PWNED"})
		if out, ok := execTool(t, hands, "write", string(in)); ok {
			t.Errorf("write %q: %q, want a refusal", p, out)
		}
		if made := watch(); len(made) != 0 {
			t.Errorf("write %q made %q beside the work directory", p, made)
		}
	}
}

// watchCreates watches dir (not its subdirectories) through inotify and
// returns a function that reports the names created or moved into it since
// its last call. The kernel queues each event as the entry is made, so
// what a finished call made is there to read.
func watchCreates(t *testing.T, dir string) func() []string {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_CREATE|syscall.IN_MOVED_TO); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		var names []string
		buf := make([]byte, 64*1024)
		for {
			n, err := syscall.Read(fd, buf)
			if err != nil || n <= 0 {
				return names
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
				names = append(names, strings.TrimRight(string(name), "\x00"))
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

// A grep whose path is a FIFO is refused and never opens it: rg opens a
// path it is given whatever it is, and waits there for a writer that may
// never come, the run with it. Here a writer stands ready, so a grep that
// opened the FIFO reads what it says.
func TestGrepFIFO(t *testing.T) {
	needRG(t)
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(work, "d", "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/fifo", filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	hands, err := workdir.Open(work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hands.Close()
	up := filepath.Join("..", filepath.Base(work), "d", "fifo") // out and back in
	t.Chdir(work)                                               // /proc/self/cwd: a link to work from outside
	for _, p := range []string{"d/fifo", "link", fifo, up, "/proc/self/cwd/d/fifo"} {
		out, ok := grepFIFO(t, hands, fifo, p)
		if ok || strings.Contains(out, "SECRET") {
			t.Errorf("grep in %q: %q (ok %v), want a refusal", p, out, ok)
		}
	}
}

// needRG skips a test of rg's handling on a machine without it, and fails
// it under CI, which installs it.
func needRG(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no rg on PATH: .ci/run installs ripgrep so that this test runs under CI")
		}
		t.Skip("no rg on PATH: the built-in search skips FIFOs")
	}
}

// grepFIFO greps for SECRET in p, with a writer standing ready at the FIFO
// fifo (so a grep that opened it reads "SECRET from the pipe"), and
// releases the writer afterwards if the grep left it waiting.
func grepFIFO(t *testing.T, hands *workdir.Tools, fifo, p string) (string, bool) {
	t.Helper()
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
	if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		<-written
		r.Close()
	} else {
		t.Fatal(err)
	}
	return out, ok
}
