package main

import (
	"bufio"
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
	f, err := os.Open(name)
	if err != nil {
		return Workload{}, err
	}
	defer f.Close()
	base := filepath.Base(name)
	w := Workload{Name: base[:len(base)-len(filepath.Ext(base))]}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l workloadLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return Workload{}, fmt.Errorf("%s: %v", name, err)
		}
		w.Inputs = append(w.Inputs, l.Input)
		w.Kinds = append(w.Kinds, l.Kind)
	}
	return w, sc.Err()
}

func countKinds(kinds []string) map[string]int {
	n := map[string]int{}
	for _, k := range kinds {
		n[k]++
	}
	return n
}
