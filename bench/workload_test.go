package main

import (
	"context"
	"reflect"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

var testConfig = WorkloadConfig{Seed: 1, Ops: 2000, Files: 100, Reads: 2000}

// The benchmark compares two implementations on the same commands, so the
// generator must give the same workload for the same seed.
func TestGenerateIsDeterministic(t *testing.T) {
	m1, r1, _ := Generate(testConfig)
	m2, r2, _ := Generate(testConfig)
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(r1, r2) {
		t.Fatal("two workloads generated with one seed differ")
	}
	other := testConfig
	other.Seed = 2
	if m3, _, _ := Generate(other); reflect.DeepEqual(m1.Inputs, m3.Inputs) {
		t.Fatal("the seed does not change the workload")
	}
}

// Every generated command must succeed, and the generator's model of the
// files must be what the store really holds afterwards; a workload of
// failing commands would measure error paths instead.
func TestWorkloadRunsAsGenerated(t *testing.T) {
	ctx := context.Background()
	mixed, reads, final := Generate(testConfig)
	want := map[string]int{"create": 100, "str_replace": 513, "insert": 399, "view_dir": 228, "view_file": 760}
	if got := countKinds(mixed.Kinds); !reflect.DeepEqual(got, want) {
		t.Errorf("mixed workload kinds = %v, want %v", got, want)
	}
	if len(reads.Inputs) != testConfig.Reads {
		t.Errorf("read-only workload has %d commands, want %d", len(reads.Inputs), testConfig.Reads)
	}
	for k := range countKinds(reads.Kinds) {
		if k != "view_file" && k != "view_dir" {
			t.Errorf("read-only workload has a %s", k)
		}
	}

	store := memstore.New()
	mem := memtool.New(store, nil)
	for _, w := range []Workload{mixed, reads} {
		for i, in := range w.Inputs {
			if r := mem.Run(ctx, in); r.IsError {
				t.Fatalf("%s command %d %s: %s", w.Name, i, in, r.Text)
			}
		}
	}
	if len(final) != testConfig.Files {
		t.Errorf("model holds %d files, want %d", len(final), testConfig.Files)
	}
	for name, text := range final {
		got, err := store.ReadFile(ctx, name, memtool.DefaultMaxReadSize)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != text {
			t.Errorf("%s holds\n%s\nthe generator expects\n%s", name, got, text)
		}
	}
}
