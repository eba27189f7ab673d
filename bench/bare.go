package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memtool/memtool/bench/internal/execproc"
)

// runBare runs a read-only workload through the bare exec loop (bench
// bareexec) and through one or more memtool binaries, taking turns run
// by run on one store, and prints each binary's throughput as a ratio to
// the bare loop's in the same round. Every answer must be the bytes the
// bare loop wrote, so that both did the same work.
func runBare(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bare", flag.ContinueOnError)
	bare := fs.String("bare", "", "the bareexec binary")
	bins := fs.String("memtool", "", "memtool binaries, comma-separated")
	store := fs.String("store", "", "a directory store that the workload's views succeed on")
	runs := fs.Int("runs", 10, "rounds; each runs every binary once, in a rotating order")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bare == "" || *bins == "" || *store == "" || fs.NArg() != 1 {
		return errors.New("need -bare, -memtool, -store and one workload file")
	}
	w, err := readWorkload(fs.Arg(0))
	if err != nil {
		return err
	}
	names := append([]string{*bare}, strings.Split(*bins, ",")...)
	opsPerRun := make([][]float64, len(names))
	ratios := make([][]float64, len(names))
	var want [][]byte
	for round := range *runs {
		took := make([]float64, len(names))
		for k := range names {
			i := (round + k) % len(names)
			answers, d, err := timeReads(names[i], *store, w.Inputs)
			if err != nil {
				return fmt.Errorf("%s: %v", names[i], err)
			}
			if want == nil {
				want = answers
			}
			for j := range answers {
				if !bytes.Equal(answers[j], want[j]) {
					return fmt.Errorf("%s answers command %d (%s) with\n%s\nwhere %s answered\n%s", names[i], j, w.Inputs[j], answers[j], names[0], want[j])
				}
			}
			took[i] = d.Seconds()
			opsPerRun[i] = append(opsPerRun[i], float64(len(w.Inputs))/d.Seconds())
		}
		for i := range names {
			ratios[i] = append(ratios[i], took[0]/took[i])
		}
	}
	fmt.Fprintf(stdout, "%d views, %d rounds: ops/s (median, min–max), and its ratio to the bare loop's in the same round (median, min–max)\n", len(w.Inputs), *runs)
	for i, name := range names {
		t, r := summarize(opsPerRun[i]), summarize(ratios[i])
		fmt.Fprintf(stdout, "%-40s %8.0f ops/s (%.0f–%.0f)  %.2f× bare (%.2f–%.2f)\n", name, t.median, t.min, t.max, r.median, r.min, r.max)
	}
	return nil
}

// timeReads starts bin as `exec --store store`, sends the warm-up view
// untimed, then times the inputs one at a time, each sent after the
// previous answer came back.
func timeReads(bin, store string, inputs []json.RawMessage) ([][]byte, time.Duration, error) {
	p, err := execproc.Start(bin, store)
	if err != nil {
		return nil, 0, err
	}
	if _, err := p.RoundTrip(warmUp); err != nil {
		return nil, 0, err
	}
	answers := make([][]byte, len(inputs))
	start := time.Now()
	for i, in := range inputs {
		if answers[i], err = p.RoundTrip(in); err != nil {
			return nil, 0, err
		}
	}
	d := time.Since(start)
	return answers, d, p.Close()
}
