package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildBinaries builds memtool and bareexec into a temp directory
// (go test puts its own go first on PATH).
func buildBinaries(t *testing.T) (memtoolBin, bareBin string) {
	t.Helper()
	dir := t.TempDir()
	memtoolBin, bareBin = filepath.Join(dir, "memtool"), filepath.Join(dir, "bareexec")
	for bin, pkg := range map[string]string{memtoolBin: "github.com/memtool/memtool/cmd/memtool", bareBin: "github.com/memtool/memtool/bench/bareexec"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return memtoolBin, bareBin
}

// bareSetup lays out a store with a small mixed workload run through
// memtool exec, and writes the read-only workload that runs on it.
func bareSetup(t *testing.T, memtoolBin string) (store, reads string) {
	t.Helper()
	dir := t.TempDir()
	mixed, readOnly, _ := Generate(WorkloadConfig{Seed: 3, Ops: 300, Files: 30, Reads: 300})
	store, reads = filepath.Join(dir, "store"), filepath.Join(dir, "read-only.jsonl")
	mixedFile := filepath.Join(dir, "mixed.jsonl")
	if err := writeWorkload(mixedFile, mixed); err != nil {
		t.Fatal(err)
	}
	if err := writeWorkload(reads, readOnly); err != nil {
		t.Fatal(err)
	}
	if err := runExecDriver([]string{"-memtool", memtoolBin, "-store", store, mixedFile}); err != nil {
		t.Fatal(err)
	}
	return store, reads
}

// The bare loop answers the read-only workload (file views, with and
// without view_range, and directory views) with memtool's bytes, so that
// bench bare compares the same work; and bench bare reports a ratio for
// each binary.
func TestBareAnswersAsMemtool(t *testing.T) {
	memtoolBin, bareBin := buildBinaries(t)
	store, reads := bareSetup(t, memtoolBin)
	var out bytes.Buffer
	if err := runBare([]string{"-bare", bareBin, "-memtool", memtoolBin, "-store", store, "-runs", "2", reads}, &out); err != nil {
		t.Fatalf("bench bare: %v", err)
	}
	for _, bin := range []string{bareBin, memtoolBin} {
		if !strings.Contains(out.String(), bin) {
			t.Errorf("the report names no line for %s:\n%s", bin, out.String())
		}
	}
	if n := strings.Count(out.String(), "× bare"); n != 4 {
		t.Errorf("the report holds %d ratios, want 4 (throughput and CPU of two binaries):\n%s", n, out.String())
	}
}

// A binary whose answers differ from the bare loop's stops the comparison.
func TestBareRefusesOtherAnswers(t *testing.T) {
	memtoolBin, bareBin := buildBinaries(t)
	store, reads := bareSetup(t, memtoolBin)
	echo := filepath.Join(t.TempDir(), "echo")
	if err := os.WriteFile(echo, []byte("#!/bin/sh\nexec cat\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := runBare([]string{"-bare", bareBin, "-memtool", echo, "-store", store, "-runs", "1", reads}, new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), "answers command 0") {
		t.Fatalf("bench bare with a binary that echoes its input: %v, want an error naming the first answer that differs", err)
	}
}
