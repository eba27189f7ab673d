// Package execproc runs `memtool exec` for the load generators that drive
// it: one input line out, one answer line back.
package execproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A Proc is one running `memtool exec` process on one store. Its stderr
// is the caller's.
type Proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// Start starts bin (a memtool binary) as `memtool exec --store store`.
func Start(bin, store string) (*Proc, error) {
	cmd := exec.Command(bin, "exec", "--store", store)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// RoundTrip sends input (one line, without its newline) and returns the
// answer line, without its newline. It does not write to input's array.
func (p *Proc) RoundTrip(input []byte) ([]byte, error) {
	line := make([]byte, 0, len(input)+1)
	line = append(append(line, input...), '\n')
	if _, err := p.in.Write(line); err != nil {
		return nil, err
	}
	ans, err := p.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %v", err)
	}
	return bytes.TrimSuffix(ans, []byte("\n")), nil
}

// CPU returns the CPU time the process's threads have run so far, as
// /proc/PID/task/*/schedstat gives it, in nanoseconds: unlike the wall
// time of a run, it leaves out the time the process waited for a core on
// a busy machine. (Threads that have already exited are not counted; Go
// seldom ends one.) Linux only.
func (p *Proc) CPU() (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("reading the CPU time of process %d: no /proc/PID/task/*/schedstat (%v)", p.cmd.Process.Pid, err)
	}
	var sum time.Duration
	for _, name := range tasks {
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended meanwhile
		}
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", name, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// Close ends the input and waits for the process to exit.
func (p *Proc) Close() error {
	if err := p.in.Close(); err != nil {
		return errors.Join(err, p.cmd.Wait())
	}
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("memtool exec: %v", err)
	}
	return nil
}
