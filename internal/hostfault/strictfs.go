//go:build linux

package hostfault

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A StrictFS is a file system whose machine can lose its power, for
// tests, stricter than PowerLoss's ext4: a file system in memory, served
// over FUSE at Dir, that holds on its "disk" only what POSIX says an
// fsync makes durable. A file's data is durable as of its last fsync (or
// fdatasync); a name made, removed or moved in a directory (create,
// mkdir, link, unlink, rmdir, rename) is durable only once that
// directory has been fsynced, an fsync of the file itself does not do
// it, and a fsync of one directory makes nothing durable in another; a
// rename is one change, which an fsync of either of its directories
// makes durable whole. ext4 commits its whole journal at any fsync, so
// there a change made without its own fsync survives as soon as anything
// else is fsynced; here it does not.
//
// Crash takes what the disk holds, as after a power loss, and serves it
// at Dir in place of the file system the program saw. Each crash keeps,
// at random, either only what was made durable, or that and, one in
// two, each change that was not (in the order they were made, as far as
// what was kept allows) and each file's data as it is rather than as
// last synced, whole or torn (its new size, each 4 KiB page of it new or
// as synced, zeros past that): a disk the kernel had written some of the
// rest to on its own, such as a file's new name without its data.
//
// The file system is served by another process, the test binary run
// again (see init). Served by the test process itself, it hung a run of
// the power-loss tests: a goroutine of the server had begun to stop the
// world for the garbage collector and never got it stopped, and every
// program using the file system waited for an answer. Most likely a
// thread starting a program (os/exec), which cannot stop until the new
// program has execed, waited for that program to close the test's
// files on the file system it had inherited, which waits for the server.
type StrictFS struct {
	Dir    string
	t      testing.TB
	seed   uint64
	rng    *rand.Rand
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr strings.Builder
}

// The environment of a StrictFS's server process.
const (
	strictDirEnv  = "MEMTOOL_STRICTFS_DIR"
	strictSeedEnv = "MEMTOOL_STRICTFS_SEED"
)

// init makes the test binary a StrictFS's server when it is started as
// one (strictDirEnv set): it serves until its standard input ends, then
// exits, before any test runs.
func init() {
	if dir := os.Getenv(strictDirEnv); dir != "" {
		os.Exit(serveStrict(dir, os.Getenv(strictSeedEnv), os.Stdin, os.Stdout))
	}
}

// NewStrictFS mounts an empty StrictFS at a new directory, removed when
// the test ends. Its crashes take their random choices from a source
// seeded by the test's name.
func NewStrictFS(t testing.TB) *StrictFS {
	t.Helper()
	NeedRoot(t, "mounting a FUSE file system")
	if _, err := os.Stat("/dev/fuse"); err != nil {
		Unavailable(t, "FUSE: "+err.Error())
	}
	dir, err := os.MkdirTemp("", "memtool-strictfs-")
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	s := &StrictFS{Dir: dir, t: t, seed: h.Sum64(), rng: rand.New(rand.NewPCG(h.Sum64(), 0))}
	self, err := os.Executable() // os.Args[0] may be relative to a directory since left
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(self)
	s.cmd.Env = append(os.Environ(), strictDirEnv+"="+dir, fmt.Sprintf("%s=%d", strictSeedEnv, s.seed))
	s.cmd.Stderr = &s.stderr
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewReader(stdout)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(); os.Remove(dir) })
	if answer := s.answer(); answer != "ready" {
		Unavailable(t, "mounting a FUSE file system: "+answer)
	}
	return s
}

// Crash loses the power: every process writing under Dir must have
// ended and closed its files there (killed: a crash gives no chance to
// finish). It serves at Dir what the disk then holds, keeping either
// only what was durable or, at random, some of the rest too (the log
// says which).
func (s *StrictFS) Crash() {
	s.t.Helper()
	s.CrashKeeping(s.rng.IntN(2) == 0)
}

// CrashKeeping is Crash, keeping some of what was not durable if some.
func (s *StrictFS) CrashKeeping(some bool) {
	s.t.Helper()
	fmt.Fprintf(s.in, "crash %t\n", some)
	if answer := s.answer(); answer != "ok" {
		s.t.Fatalf("strictfs: the crash failed: %s", answer)
	}
	s.t.Logf("strictfs: power lost; kept %s", map[bool]string{false: "only what was durable", true: "what was durable and some of the rest"}[some])
}

// answer is the server's next line, or what went wrong.
func (s *StrictFS) answer() string {
	line, err := s.out.ReadString('\n')
	if err != nil {
		return fmt.Sprintf("the server ended (%v): %s", err, s.stderr.String())
	}
	return strings.TrimSuffix(line, "\n")
}

// stop ends the server, which unmounts Dir; should that fail (a process
// of a failed test still has a file there), Dir is detached.
func (s *StrictFS) stop() {
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			s.t.Errorf("strictfs: the server of %s: %v: %s", s.Dir, err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	syscall.Unmount(s.Dir, syscall.MNT_DETACH) // nothing, once unmounted
}
