package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/memtool/memtool/bench/internal/execproc"
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

	p, err := execproc.Start(*bin, *store)
	if err != nil {
		return err
	}
	if _, err := p.RoundTrip(warmUp); err != nil {
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
			raw[i], err = p.RoundTrip(in)
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
	if err := p.Close(); err != nil {
		return err
	}
	if *answersTo != "" {
		return os.WriteFile(*answersTo, append(bytes.Join(answers, []byte("\n")), '\n'), 0o644)
	}
	return nil
}
