package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
)

// targets are the ratios memtool aims for, memtool ops/s over TS ops/s.
var targets = map[string]float64{"mixed": 2, "read-only": 5}

func runReport(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	resultsFrom := fs.String("results", "", "result lines of both drivers, all runs")
	answersMemtool := fs.String("answers-memtool", "", "answers of one memtool run (optional)")
	answersTS := fs.String("answers-ts", "", "answers of one TS run (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	results, err := readJSONL[result](*resultsFrom)
	if err != nil {
		return err
	}
	errs := report(w, results)
	if *answersMemtool != "" && *answersTS != "" {
		if err := compareAnswers(w, *answersMemtool, *answersTS); err != nil {
			errs = errors.Join(errs, err)
		}
	}
	return errs
}

// stats are the ops/s of the runs of one implementation on one workload.
type stats struct {
	median, min, max float64
	runs             int
}

func opsPerSecond(rs []result) stats {
	var v []float64
	for _, r := range rs {
		v = append(v, float64(r.Ops)/r.Seconds)
	}
	return summarize(v)
}

// summarize returns the median, smallest and largest of v, which it sorts.
func summarize(v []float64) stats {
	slices.Sort(v)
	s := stats{min: v[0], max: v[len(v)-1], runs: len(v)}
	if n := len(v); n%2 == 1 {
		s.median = v[n/2]
	} else {
		s.median = (v[n/2-1] + v[n/2]) / 2
	}
	return s
}

// report prints the comparison. It returns an error if a command failed in
// any run: the figures of such a run measure something else.
func report(w io.Writer, results []result) error {
	by := map[[2]string][]result{}
	var workloads []string
	failed := 0
	for _, r := range results {
		key := [2]string{r.Impl, r.Workload}
		by[key] = append(by[key], r)
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
		failed += r.Errors
	}
	fmt.Fprintf(w, "%-10s %30s %30s %9s %7s\n", "workload", "memtool exec ops/s", "TS SDK ops/s", "ratio", "target")
	for _, wl := range workloads {
		mt, ts := by[[2]string{"memtool", wl}], by[[2]string{"ts-sdk", wl}]
		if len(mt) == 0 || len(ts) == 0 {
			fmt.Fprintf(w, "%-10s (missing results of one implementation)\n", wl)
			continue
		}
		m, t := opsPerSecond(mt), opsPerSecond(ts)
		ratio := m.median / t.median
		verdict := ""
		if target, ok := targets[wl]; ok {
			if ratio >= target {
				verdict = fmt.Sprintf("%.0fx met", target)
			} else {
				verdict = fmt.Sprintf("%.0fx MISSED (at %.0f%% of it)", target, 100*ratio/target)
			}
		}
		fmt.Fprintf(w, "%-10s %30s %30s %8.2fx  %s\n", wl, m.String(), t.String(), ratio, verdict)
	}
	fmt.Fprintln(w, "ops/s: median of the runs (min-max); ratio = memtool median / TS median.")

	fmt.Fprintln(w, "\nMean time per command, microseconds (all runs; includes the exec pipe round trip for memtool):")
	fmt.Fprintf(w, "%-10s %-12s %8s %12s %12s %9s\n", "workload", "kind", "count", "memtool", "TS SDK", "TS/memtool")
	for _, wl := range workloads {
		mk, tk := sumKinds(by[[2]string{"memtool", wl}]), sumKinds(by[[2]string{"ts-sdk", wl}])
		var kinds []string
		for k := range mk {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			m, t := mk[k], tk[k]
			if t == nil || m.N == 0 || t.N == 0 {
				continue
			}
			mu, tu := 1e6*m.Seconds/float64(m.N), 1e6*t.Seconds/float64(t.N)
			fmt.Fprintf(w, "%-10s %-12s %8d %12.1f %12.1f %8.2fx\n", wl, k, m.N/len(by[[2]string{"memtool", wl}]), mu, tu, tu/mu)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d commands failed across the runs (see the drivers' messages): the workload did not run as generated", failed)
	}
	return nil
}

func (s stats) String() string {
	return fmt.Sprintf("%.0f (%.0f-%.0f, %d runs)", s.median, s.min, s.max, s.runs)
}

func sumKinds(rs []result) map[string]*kindTime {
	out := map[string]*kindTime{}
	for _, r := range rs {
		for k, v := range r.Kinds {
			if out[k] == nil {
				out[k] = &kindTime{}
			}
			out[k].N += v.N
			out[k].Seconds += v.Seconds
		}
	}
	return out
}

// compareAnswers checks that both implementations gave the same answers, a
// sign that they did the same work. The workload avoids every documented
// deviation, so the answers should be identical.
func compareAnswers(w io.Writer, memtoolFile, tsFile string) error {
	a, err := readJSONL[map[string]any](memtoolFile)
	if err != nil {
		return err
	}
	b, err := readJSONL[map[string]any](tsFile)
	if err != nil {
		return err
	}
	if len(a) != len(b) {
		return fmt.Errorf("answers: memtool gave %d, TS %d", len(a), len(b))
	}
	same, first := 0, -1
	for i := range a {
		if reflect.DeepEqual(a[i], b[i]) {
			same++
		} else if first < 0 {
			first = i
		}
	}
	fmt.Fprintf(w, "\nAnswers identical between memtool and the TS SDK: %d of %d.\n", same, len(a))
	if first >= 0 {
		fmt.Fprintf(w, "First difference, command %d:\n  memtool: %v\n  TS SDK:  %v\n", first, a[first], b[first])
	}
	return nil
}
