package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// workloadLine is one line of a workload file.
type workloadLine struct {
	Kind  string          `json:"kind"`
	Input json.RawMessage `json:"input"`
}

func runGen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write mixed.jsonl and read-only.jsonl to")
	var cfg WorkloadConfig
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.IntVar(&cfg.Ops, "ops", 2000, "commands in the mixed workload")
	fs.IntVar(&cfg.Files, "files", 100, "files the mixed workload creates")
	fs.IntVar(&cfg.Reads, "reads", 2000, "commands in the read-only workload")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || cfg.Files < 1 || cfg.Ops < cfg.Files || cfg.Reads < 1 {
		return fmt.Errorf("need -out, and 1 <= -files <= -ops, -reads >= 1")
	}
	mixed, reads, _ := Generate(cfg)
	for _, w := range []Workload{mixed, reads} {
		if err := writeWorkload(filepath.Join(*out, w.Name+".jsonl"), w); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %d commands %v\n", w.Name, len(w.Inputs), countKinds(w.Kinds))
	}
	return nil
}

func writeWorkload(name string, w Workload) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for i, in := range w.Inputs {
		if err := enc.Encode(workloadLine{Kind: w.Kinds[i], Input: in}); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readWorkload reads a workload file; its name without .jsonl names it.
func readWorkload(name string) (Workload, error) {
	lines, err := readJSONL[workloadLine](name)
	if err != nil {
		return Workload{}, err
	}
	base := filepath.Base(name)
	w := Workload{Name: base[:len(base)-len(filepath.Ext(base))]}
	for _, l := range lines {
		w.Inputs = append(w.Inputs, l.Input)
		w.Kinds = append(w.Kinds, l.Kind)
	}
	return w, nil
}

// readJSONL reads a file of one JSON value a line (workloads, results,
// answers), skipping blank lines.
func readJSONL[T any](name string) ([]T, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

func countKinds(kinds []string) map[string]int {
	n := map[string]int{}
	for _, k := range kinds {
		n[k]++
	}
	return n
}
