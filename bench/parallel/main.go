// Command parallel measures how `memtool exec` overlaps writes on a
// directory store; bench/parallel.sh runs it (see bench/parallel.md):
//
//	parallel turn -memtool BIN -dir DIR [-calls 64 -rounds 10]
//	    one process: a turn of CALLS str_replace on CALLS files, sent as
//	    one JSON array line, against the same calls sent as CALLS lines
//	    one after another; rounds alternate which goes first
//	parallel procs -memtool BIN -dir DIR -workload FILE [-procs 4 -runs 3]
//	    the workload (bench gen's mixed.jsonl) through one process, against
//	    PROCS processes at once on one store, each in its own directory
//	    of it (/memories/pN); aggregate ops/s of each, runs alternating
//	parallel bare -dir DIR [-calls 64 -rounds 7]
//	    the floor of a turn on this disk: a bare Go loop replacing CALLS
//	    files durably one after another, against 8 and all at once
//
// Every answer is checked: a failed call stops the measurement.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memtool/memtool/bench/internal/execproc"
	"github.com/memtool/memtool/bench/internal/subcmd"
	"github.com/memtool/memtool/bench/internal/workfile"
)

func main() {
	os.Exit(subcmd.Run("parallel", os.Args[1:], os.Stderr, []subcmd.Command{
		{Name: "turn", Run: runTurn},
		{Name: "procs", Run: runProcs},
		{Name: "bare", Run: runBare},
	}))
}

// An execProc is one `memtool exec` process that checks its answers.
type execProc struct{ *execproc.Proc }

func startExec(bin, store string) (execProc, error) {
	p, err := execproc.Start(bin, store)
	return execProc{p}, err
}

// call sends one line and checks the answer: one result, or (for an
// array line) one per call, none of them an error.
func (p execProc) call(line []byte) error {
	ans, err := p.RoundTrip(line)
	if err != nil {
		return err
	}
	type result struct {
		IsError bool            `json:"is_error"`
		Content json.RawMessage `json:"content"`
	}
	var results []result
	if bytes.HasPrefix(line, []byte("[")) {
		err = json.Unmarshal(ans, &results)
	} else {
		results = make([]result, 1)
		err = json.Unmarshal(ans, &results[0])
	}
	if err != nil {
		return fmt.Errorf("answer %.200q: %v", ans, err)
	}
	for _, r := range results {
		if r.IsError {
			return fmt.Errorf("a call failed: %s (line %.200s)", r.Content, line)
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func runTurn(args []string) error {
	fs := flag.NewFlagSet("turn", flag.ContinueOnError)
	bin := fs.String("memtool", "", "the memtool binary")
	dir := fs.String("dir", "", "an empty directory for the store")
	calls := fs.Int("calls", 64, "str_replace calls in the turn, one file each")
	rounds := fs.Int("rounds", 10, "rounds, each timing the turn and the lines once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" || *dir == "" {
		return errors.New("need -memtool and -dir")
	}
	p, err := startExec(*bin, *dir)
	if err != nil {
		return err
	}
	defer p.Close()
	file := func(i int) string { return fmt.Sprintf("/memories/turn/f%02d.md", i) }
	pad := strings.Repeat("The user prefers concise answers; keep notes short.\n", 40) // about 2 KB
	var creates []json.RawMessage
	for i := range *calls {
		creates = append(creates, mustJSON(map[string]string{"command": "create", "path": file(i), "file_text": "version v0\n" + pad}))
	}
	if err := p.call(mustJSON(creates)); err != nil {
		return err
	}
	gen := 0
	edits := func() [][]byte {
		var lines [][]byte
		for i := range *calls {
			lines = append(lines, mustJSON(map[string]string{"command": "str_replace", "path": file(i),
				"old_str": fmt.Sprintf("version v%d\n", gen), "new_str": fmt.Sprintf("version v%d\n", gen+1)}))
		}
		gen++
		return lines
	}
	asTurn := func() (time.Duration, error) {
		lines := edits()
		line := append([]byte("["), bytes.Join(lines, []byte(","))...)
		line = append(line, ']')
		t := time.Now()
		err := p.call(line)
		return time.Since(t), err
	}
	asLines := func() (time.Duration, error) {
		lines := edits()
		t := time.Now()
		for _, l := range lines {
			if err := p.call(l); err != nil {
				return 0, err
			}
		}
		return time.Since(t), nil
	}
	var turns, seqs, ratios []float64
	for r := range *rounds {
		order := []func() (time.Duration, error){asTurn, asLines}
		if r%2 == 1 {
			order = []func() (time.Duration, error){asLines, asTurn}
		}
		var d [2]time.Duration
		for i, f := range order {
			if d[i], err = f(); err != nil {
				return err
			}
		}
		if r%2 == 1 {
			d[0], d[1] = d[1], d[0]
		}
		turns = append(turns, d[0].Seconds()*1e3)
		seqs = append(seqs, d[1].Seconds()*1e3)
		ratios = append(ratios, d[0].Seconds()/d[1].Seconds())
	}
	fmt.Printf("turn of %d str_replace on %d files, %d rounds (medians, min-max):\n", *calls, *calls, *rounds)
	fmt.Printf("  one array line: %s ms\n", summary(turns, "%.1f"))
	fmt.Printf("  %d lines:       %s ms\n", *calls, summary(seqs, "%.1f"))
	fmt.Printf("  turn / lines:   %s (goal <= 0.3)\n", summary(ratios, "%.3f"))
	return nil
}

func runProcs(args []string) error {
	fs := flag.NewFlagSet("procs", flag.ContinueOnError)
	bin := fs.String("memtool", "", "the memtool binary")
	dir := fs.String("dir", "", "a directory for the stores (one new store per run)")
	workload := fs.String("workload", "", "a workload file of bench gen (mixed.jsonl)")
	procs := fs.Int("procs", 4, "processes sharing the store")
	runs := fs.Int("runs", 3, "runs of each")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" || *dir == "" || *workload == "" {
		return errors.New("need -memtool, -dir and -workload")
	}
	inputs, err := workfile.Read(*workload)
	if err != nil {
		return err
	}
	var single, multi, ratios []float64
	for r := range *runs {
		var rates [2]float64
		for i, n := range []int{1, *procs} {
			if r%2 == 1 {
				n = []int{*procs, 1}[i]
			}
			store := filepath.Join(*dir, fmt.Sprintf("run%d-procs%d", r, n))
			rate, err := aggregate(*bin, store, inputs, n)
			if err != nil {
				return err
			}
			if n == 1 {
				rates[0] = rate
			} else {
				rates[1] = rate
			}
		}
		single = append(single, rates[0])
		multi = append(multi, rates[1])
		ratios = append(ratios, rates[1]/rates[0])
	}
	fmt.Printf("%s (%d commands) on a directory store, %d runs (medians, min-max):\n", filepath.Base(*workload), len(inputs), *runs)
	fmt.Printf("  1 process:   %s ops/s\n", summary(single, "%.0f"))
	fmt.Printf("  %d processes: %s ops/s in all\n", *procs, summary(multi, "%.0f"))
	fmt.Printf("  %d / 1:       %s (goal >= 1.5)\n", *procs, summary(ratios, "%.2f"))
	return nil
}

// aggregate runs the inputs in n processes at once on a new store in dir,
// process i under /memories/pi, and returns the commands answered per
// second by all of them, from when every process has started and opened
// the store to the last answer.
func aggregate(bin, dir string, inputs []map[string]any, n int) (float64, error) {
	ps := make([]execProc, n)
	lines := make([][][]byte, n)
	for i := range n {
		p, err := startExec(bin, dir)
		if err != nil {
			return 0, err
		}
		defer p.Close()
		if err := p.call([]byte(`{"command":"view","path":"/memories"}`)); err != nil {
			return 0, err
		}
		ps[i] = p
		lines[i] = workfile.Under(inputs, fmt.Sprintf("/memories/p%d", i))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i, p := range ps {
		wg.Go(func() {
			for _, l := range lines[i] {
				if errs[i] = p.call(l); errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(n*len(inputs)) / elapsed.Seconds(), nil
}

// summary formats the median and the range of xs.
func summary(xs []float64, format string) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	median := (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	return fmt.Sprintf(format+" ("+format+"-"+format+")", median, s[0], s[len(s)-1])
}
