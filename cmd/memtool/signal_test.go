//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// hangGuard bounds every wait of these tests: not a timing assertion, only
// a stop for a test that would otherwise hang.
const hangGuard = time.Minute

// A supervisor's SIGTERM (or Ctrl-C) ends `memtool exec` even while it waits
// for input, after every answer so far has been written, with exit status 0.
func TestExecStopsOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			c := startExec(t, "--store", t.TempDir())
			// One command answered proves the process is up and serving.
			if got := c.ask(t, `{"command":"create","path":"/memories/a.txt","file_text":"x"}`); !strings.Contains(got, "File created successfully") {
				t.Fatalf("first answer = %q", got)
			}
			// stdin stays open: only the signal can end the process.
			c.signal(t, sig)
			if code := c.wait(t); code != exitOK {
				t.Fatalf("exit status %d after %v, want 0\n%s", code, sig, c.stderr.String())
			}
		})
	}
}

// A lockedStore is a store whose write lock the test can hold, so that a
// write through memtool waits for it.
type lockedStore struct {
	args    []string                // the exec flags that open the store
	hold    func()                  // takes the lock until the test ends
	waiting func(*execProcess) bool // reports whether the process waits for it
	check   func(t *testing.T)      // checks that the cancelled write changed nothing
}

// lockedStores are the stores the tests below lock: the file store (its
// flock, taken by this process) and PostgreSQL (the tenant's advisory lock,
// taken on a connection of the test).
var lockedStores = []struct {
	name string
	make func(t *testing.T) lockedStore
}{
	{"file", fileStoreToLock},
	{"postgres", postgresStoreToLock},
}

// fileStoreToLock makes a file store holding a.txt.
func fileStoreToLock(t *testing.T) lockedStore {
	requireCancellableFileLock(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o600); err != nil {
		t.Fatal(err)
	}
	return lockedStore{
		args: []string{"--store", dir},
		hold: func() { holdFlock(t, filepath.Join(dir, ".memtool.lock")) },
		// A store that waits in flock(2) shows in /proc/locks; one that
		// polls the lock does not, and is taken to wait once it has read
		// the line a while ago.
		waiting: func(c *execProcess) bool {
			return waitsForFlock(t, c.cmd.Process.Pid) || c.inputReadFor(t, time.Second)
		},
		check: func(t *testing.T) {
			if got := strings.Join(dirNames(t, dir), " "); got != ".memtool.lock a.txt" {
				t.Errorf("the store holds %q after the cancelled write, want only .memtool.lock a.txt", got)
			}
		},
	}
}

// holdFlock takes an exclusive flock on path until t ends, on an open file
// description of its own, so that every other one waits for it.
func holdFlock(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
}

// waitsForFlock reports whether process pid is blocked in flock(2), as
// /proc/locks lists the waiters ("-> FLOCK ... pid ...").
func waitsForFlock(t *testing.T, pid int) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatalf("these tests see a blocked flock in /proc/locks: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "->" && f[2] == "FLOCK" && f[5] == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// requireCancellableFileLock skips t (fails it under CI) unless a file
// store write that waits for the flock gives up when its context ends:
// without that, memtool cannot cancel the write, and what these tests
// check does not hold for the file store.
func requireCancellableFileLock(t *testing.T) {
	t.Helper()
	fileLockProbe.once.Do(func() { fileLockProbe.err = probeFileLock() })
	if fileLockProbe.err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(fileLockProbe.err)
	}
	t.Skipf("skipping the file store: %v", fileLockProbe.err)
}

var fileLockProbe struct {
	once sync.Once
	err  error
}

// probeFileLock runs a file store write with a short deadline while this
// process holds the store's flock, and releases the lock if the write is
// still waiting after a while; it returns an error unless the write ended
// with its deadline.
func probeFileLock() error {
	dir, err := os.MkdirTemp("", "memtool-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := filestore.Open(dir, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	f, err := os.OpenFile(filepath.Join(dir, ".memtool.lock"), os.O_RDWR|os.O_CREATE, 0o600) // as the first writer makes it
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Mkdir(ctx, "d") }()
	var mkdirErr error
	select {
	case mkdirErr = <-done:
	case <-time.After(hangGuard / 6):
		unix.Flock(int(f.Fd()), unix.LOCK_UN) // the write goes on and ends
		mkdirErr = <-done
	}
	if errors.Is(mkdirErr, context.DeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("a file store write waiting for the flock does not end with its context (it returned %v once the lock was free): filestore's lock wait must honour ctx", mkdirErr)
}

// postgresStoreToLock makes a PostgreSQL store, for a tenant of its own,
// holding a.txt.
func postgresStoreToLock(t *testing.T) lockedStore {
	url := pgtest.URL(t)
	b := make([]byte, 8)
	rand.Read(b)
	tenant := "signal-" + hex.EncodeToString(b)
	args := []string{"--store", url, "--tenant", tenant}
	if out := execMemtool(t, jsonLine(map[string]any{"command": "create", "path": "/memories/a.txt", "file_text": "alpha"}), args...); !strings.Contains(out, "File created") {
		t.Fatalf("setup: %s", out)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	var holder int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	return lockedStore{
		args: args,
		// The lock pgstore takes for each write of the tenant.
		hold: func() {
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, "memtool tenant "+tenant); err != nil {
				t.Fatal(err)
			}
		},
		// Only memtool waits for the test's connection: the key is the
		// test's own.
		waiting: func(*execProcess) bool {
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, holder).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n > 0
		},
		check: func(t *testing.T) {
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
				t.Fatal(err)
			}
			s := openTestStore(t, url, tenant)
			if _, err := s.Stat(ctx, "b.txt"); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("b.txt after the cancelled create: %v, want it missing", err)
			}
		},
	}
}

// waitingLine is an exec line whose create waits for the held lock.
const waitingLine = `{"command":"create","path":"/memories/b.txt","file_text":"beta"}`

// waitingAnswer is the answer to waitingLine once the create is cancelled.
const waitingAnswer = `{"is_error":true,"content":"Error: The create command on /memories/b.txt was cancelled; nothing was changed"}` + "\n"

// timedOutAnswer is the answer to waitingLine once --timeout ends the wait.
const timedOutAnswer = `{"is_error":true,"content":"Error: The create command on /memories/b.txt did not finish in time (the memory store did not answer); nothing was changed"}` + "\n"

// SIGTERM or SIGINT while a write waits for a lock another process holds
// cancels the write: exec answers the line in progress (the write changed
// nothing) and exits with 128 + the signal's number.
func TestExecSignalCancelsLockWait(t *testing.T) {
	t.Parallel()
	for _, st := range lockedStores {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(st.name+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				ls := st.make(t)
				c := startExec(t, ls.args...)
				c.ask(t, `{"command":"view","path":"/memories"}`) // the store is open
				ls.hold()
				c.send(t, waitingLine)
				c.waitFor(t, "memtool waiting for the lock", func() bool { return ls.waiting(c) })
				c.signal(t, sig)
				got := c.readLine(t)
				if code := c.wait(t); code != 128+int(sig) {
					t.Errorf("exit status %d after %v, want %d\n%s", code, sig, 128+int(sig), c.stderr.String())
				}
				if got != waitingAnswer {
					t.Errorf("answer %q, want %q\nstderr:\n%s", got, waitingAnswer, c.stderr.String())
				}
				ls.check(t)
			})
		}
	}
}

// With --timeout, a call that waits for a lock longer than that is
// cancelled, changes nothing and is answered; exec goes on with the next
// line.
func TestExecCallTimeout(t *testing.T) {
	t.Parallel()
	for _, st := range lockedStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			ls := st.make(t)
			c := startExec(t, append(ls.args, "--timeout", "1s")...)
			c.ask(t, `{"command":"view","path":"/memories"}`) // the store is open
			ls.hold()
			c.send(t, waitingLine)
			if got := c.readLine(t); got != timedOutAnswer {
				t.Errorf("answer %q, want %q", got, timedOutAnswer)
			}
			if got := c.ask(t, `{"command":"view","path":"/memories/a.txt"}`); !strings.Contains(got, `1\talpha`) {
				t.Errorf("the next line: %q", got)
			}
			c.closeInput()
			if code := c.wait(t); code != exitOK {
				t.Errorf("exit status %d, want 0\n%s", code, c.stderr.String())
			}
			ls.check(t)
		})
	}
}

// A signal while exec opens a store that does not answer (a PostgreSQL
// address that accepts connections and then says nothing) ends it at once,
// with 128 + the signal's number. (A file store never waits as it opens.)
func TestExecSignalWhileOpening(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	c := startExec(t, "--store", "postgres://memtool@"+ln.Addr().String()+"/memtool?sslmode=disable&connect_timeout=60")
	select {
	case <-accepted:
	case <-time.After(time.Minute):
		t.Fatal("memtool did not connect to the silent server")
	}
	c.signal(t, syscall.SIGTERM)
	if code := c.wait(t); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d\n%s", code, 128+int(syscall.SIGTERM), c.stderr.String())
	}
	if want := "terminated while opening the store"; !strings.Contains(c.stderr.String(), want) {
		t.Errorf("stderr %q, want it to say %q", c.stderr.String(), want)
	}
}

// A line in progress that does not end once cancelled (here its answer is
// stuck in a full stdout pipe) does not keep exec alive: after a signal it
// gives up once the grace period is over, and a second signal ends it at
// once. Either way the exit status is 128 + the first signal's number.
func TestExecStuckLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sigs []syscall.Signal
		// says returns what stderr must say, given the signal that came
		// first, whose number the exit status carries (two signals sent
		// at once may be taken in either order).
		says func(first syscall.Signal) string
	}{
		{"grace", []syscall.Signal{syscall.SIGTERM}, func(first syscall.Signal) string {
			return first.String() + ": the line in progress did not end after it was cancelled, and got no answer"
		}},
		{"second signal", []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}, func(first syscall.Signal) string {
			second := syscall.SIGTERM
			if first == syscall.SIGTERM {
				second = syscall.SIGINT
			}
			return "a second signal (" + second.String() + "): the line in progress got no answer"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			big := strings.Repeat(strings.Repeat("x", 99)+"\n", 200)
			if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o600); err != nil {
				t.Fatal(err)
			}
			c := startExec(t, "--store", dir)
			size, err := unix.FcntlInt(c.stdout.Fd(), unix.F_GETPIPE_SZ, 0)
			if err != nil {
				t.Fatal(err)
			}
			// An answer of more than the pipe holds, which nobody reads.
			c.send(t, viewTurn(2*size/len(big)+1, "/memories/big.txt"))
			c.waitFor(t, "a full stdout pipe", func() bool { return unread(t, c.stdout) == size })
			for _, sig := range tc.sigs {
				c.signal(t, sig)
			}
			code := c.wait(t)
			for _, first := range tc.sigs {
				if code == 128+int(first) {
					if want := tc.says(first); !strings.Contains(c.stderr.String(), want) {
						t.Errorf("stderr %q, want it to say %q", c.stderr.String(), want)
					}
					return
				}
			}
			t.Errorf("exit status %d, want 128 + one of %v\n%s", code, tc.sigs, c.stderr.String())
		})
	}
}

// execProcess is a `memtool exec` child, whose stdin and stdout are pipes
// the test can look into.
type execProcess struct {
	cmd       *exec.Cmd
	stdin     *os.File // the write end
	stdinR    *os.File // the read end, kept open to see what is unread
	started   time.Time
	inputRead time.Time // when all of stdin was first seen read
	stdout    *os.File  // the read end
	out       *bufio.Reader
	stderr    *bytes.Buffer // read only once done is closed
	done      chan struct{} // closed when the process has ended
	err       error         // of Wait, set before done is closed
}

func startExec(t *testing.T, args ...string) *execProcess {
	t.Helper()
	c := &execProcess{stderr: new(bytes.Buffer), done: make(chan struct{})}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdin, c.stdinR, c.stdout, c.out = inW, inR, outR, bufio.NewReader(outR)
	c.cmd = exec.Command(memtoolBinary(t), append([]string{"exec"}, args...)...)
	c.cmd.Env = childEnv()
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.started = time.Now()
	outW.Close()
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
		c.stdin.Close()
		c.stdinR.Close()
		c.stdout.Close()
	})
	return c
}

// send writes one input line.
func (c *execProcess) send(t *testing.T, line string) {
	t.Helper()
	if _, err := c.stdin.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// readLine returns the next answer line, with its newline.
func (c *execProcess) readLine(t *testing.T) string {
	t.Helper()
	type read struct {
		line string
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		line, err := c.out.ReadString('\n')
		ch <- read{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			<-c.done
			t.Fatalf("reading an answer: %v (after %q); memtool ended: %v\nstderr:\n%s", r.err, r.line, c.err, c.stderr.String())
		}
		return r.line
	case <-time.After(hangGuard):
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("no answer line in %v\nstderr:\n%s", hangGuard, c.stderr.String())
		return ""
	}
}

// ask sends one line and returns its answer.
func (c *execProcess) ask(t *testing.T, line string) string {
	t.Helper()
	c.send(t, line)
	return c.readLine(t)
}

func (c *execProcess) closeInput() { c.stdin.Close() }

func (c *execProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// unread returns how many bytes wait in the pipe whose read end is f.
func unread(t *testing.T, f *os.File) int {
	t.Helper()
	n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ) // FIONREAD
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// inputReadFor reports whether memtool has read all its input at least d
// ago, as far as calls of inputReadFor have seen.
func (c *execProcess) inputReadFor(t *testing.T, d time.Duration) bool {
	if unread(t, c.stdinR) > 0 {
		c.inputRead = time.Time{}
		return false
	}
	if c.inputRead.IsZero() {
		c.inputRead = time.Now()
	}
	return time.Since(c.inputRead) >= d
}

// waitFor polls cond until it holds, failing t if memtool ends first or
// the hang guard runs out.
func (c *execProcess) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		select {
		case <-c.done:
			t.Fatalf("memtool ended before %s: %v\nstderr:\n%s", what, c.err, c.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.cmd.Process.Kill()
			<-c.done
			t.Fatalf("no %s in %v\nstderr:\n%s", what, hangGuard, c.stderr.String())
		}
	}
}

// wait returns memtool's exit status once it has ended, failing t if it
// was killed by a signal, reported a race, or is still running after the
// hang guard.
func (c *execProcess) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(hangGuard):
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("memtool exec still running after %v\nstderr:\n%s", hangGuard, c.stderr.String())
	}
	checkNoRace(t, c.stderr.String())
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("memtool exec was killed by %v\nstderr:\n%s", ws.Signal(), c.stderr.String())
	}
	return c.cmd.ProcessState.ExitCode()
}
