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
	cpuPerOp := make([][]float64, len(names)) // µs
	cpuRatios := make([][]float64, len(names))
	var want [][]byte
	for round := range *runs {
		took := make([]float64, len(names))
		cpu := make([]float64, len(names))
		for k := range names {
			i := (round + k) % len(names)
			answers, d, c, err := timeReads(names[i], *store, w.Inputs)
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
			cpu[i] = c.Seconds()
			cpuPerOp[i] = append(cpuPerOp[i], c.Seconds()*1e6/float64(len(w.Inputs)))
			opsPerRun[i] = append(opsPerRun[i], float64(len(w.Inputs))/d.Seconds())
		}
		for i := range names {
			ratios[i] = append(ratios[i], took[0]/took[i])
			cpuRatios[i] = append(cpuRatios[i], cpu[i]/cpu[0])
		}
	}
	fmt.Fprintf(stdout, "%d views, %d rounds; median (min–max) over the rounds of: ops/s, its ratio to the bare loop's in the same round, CPU µs per view (all threads), its ratio to the bare loop's\n", len(w.Inputs), *runs)
	for i, name := range names {
		t, r := summarize(opsPerRun[i]), summarize(ratios[i])
		c, cr := summarize(cpuPerOp[i]), summarize(cpuRatios[i])
		fmt.Fprintf(stdout, "%-28s %6.0f ops/s (%.0f–%.0f) %5.2f× bare (%.2f–%.2f) | CPU %5.1f µs/view (%.1f–%.1f) %5.2f× bare (%.2f–%.2f)\n",
			name, t.median, t.min, t.max, r.median, r.min, r.max, c.median, c.min, c.max, cr.median, cr.min, cr.max)
	}
	return nil
}

// timeReads starts bin as `exec --store store`, sends the warm-up view
// untimed, then times the inputs one at a time, each sent after the
// previous answer came back. It returns the answers, the wall time and
// the CPU time the process spent on them.
func timeReads(bin, store string, inputs []json.RawMessage) (answers [][]byte, wall, cpu time.Duration, err error) {
	p, err := execproc.Start(bin, store)
	if err != nil {
		return nil, 0, 0, err
	}
	defer func() {
		if cerr := p.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := p.RoundTrip(warmUp); err != nil {
		return nil, 0, 0, err
	}
	cpu0, err := p.CPU()
	if err != nil {
		return nil, 0, 0, err
	}
	answers = make([][]byte, len(inputs))
	start := time.Now()
	for i, in := range inputs {
		if answers[i], err = p.RoundTrip(in); err != nil {
			return nil, 0, 0, err
		}
	}
	wall = time.Since(start)
	cpu1, err := p.CPU()
	return answers, wall, cpu1 - cpu0, err
}
