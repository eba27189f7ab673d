// Package execproc runs `memtool exec` for the load generators that drive
// it: one input line out, one answer line back.
package execproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
