package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// result is one timed run of one workload by one implementation.
type result struct {
	Impl     string               `json:"impl"`
	Workload string               `json:"workload"`
	Run      int                  `json:"run"`
	Ops      int                  `json:"ops"`
	Seconds  float64              `json:"seconds"`
	Errors   int                  `json:"errors"`
	Kinds    map[string]*kindTime `json:"kinds"`
}

// kindTime is the time spent in the commands of one kind.
type kindTime struct {
	N       int     `json:"n"`
	Seconds float64 `json:"seconds"`
}

// answer is one line of `memtool exec` output, and of the answer files.
type answer struct {
	IsError bool            `json:"is_error"`
	Content json.RawMessage `json:"content"`
}

// warmUp is sent, untimed, before the workloads, so that the process has
// started and opened its store when the clock starts. The Node driver
// sends the same.
var warmUp = []byte(`{"command":"view","path":"/memories"}`)

func runExecDriver(args []string) error {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	bin := fs.String("memtool", "", "the memtool binary")
	store := fs.String("store", "", "the store directory (the default durable file store)")
	run := fs.Int("run", 1, "number of this run, copied into the results")
	answersTo := fs.String("answers", "", "write every answer to this file, one JSON line each")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" || *store == "" || fs.NArg() == 0 {
		return errors.New("need -memtool, -store and at least one workload file")
	}
	var workloads []Workload
	for _, name := range fs.Args() {
		w, err := readWorkload(name)
		if err != nil {
			return err
		}
		workloads = append(workloads, w)
	}

	cmd := exec.Command(*bin, "exec", "--store", *store)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &pipe{in: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	if _, err := p.roundTrip(warmUp); err != nil {
		return err
	}

	var answers [][]byte
	enc := json.NewEncoder(os.Stdout)
	for _, w := range workloads {
		res := result{Impl: "memtool", Workload: w.Name, Run: *run, Ops: len(w.Inputs), Kinds: map[string]*kindTime{}}
		raw := make([][]byte, len(w.Inputs))
		perOp := make([]time.Duration, len(w.Inputs))
		start := time.Now()
		for i, in := range w.Inputs {
			t := time.Now()
			raw[i], err = p.roundTrip(in)
			if err != nil {
				return fmt.Errorf("%s command %d: %v", w.Name, i, err)
			}
			perOp[i] = time.Since(t)
		}
		res.Seconds = time.Since(start).Seconds()
		for i, line := range raw {
			var a answer
			if err := json.Unmarshal(line, &a); err != nil {
				return fmt.Errorf("%s command %d: answer %q: %v", w.Name, i, line, err)
			}
			if a.IsError {
				res.Errors++
				if res.Errors == 1 {
					fmt.Fprintf(os.Stderr, "bench exec: %s command %d failed: %s\n  input: %s\n", w.Name, i, a.Content, w.Inputs[i])
				}
			}
			k := res.Kinds[w.Kinds[i]]
			if k == nil {
				k = &kindTime{}
				res.Kinds[w.Kinds[i]] = k
			}
			k.N++
			k.Seconds += perOp[i].Seconds()
		}
		answers = append(answers, raw...)
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	if err := stdin.Close(); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("memtool exec: %v", err)
	}
	if *answersTo != "" {
		return os.WriteFile(*answersTo, append(bytes.Join(answers, []byte("\n")), '\n'), 0o644)
	}
	return nil
}

// pipe talks to `memtool exec`: one input line out, one answer line back.
type pipe struct {
	in  io.Writer
	out *bufio.Reader
}

func (p *pipe) roundTrip(input []byte) ([]byte, error) {
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
