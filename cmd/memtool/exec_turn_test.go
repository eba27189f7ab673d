package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// countingStore is a memstore that counts the Stat calls started, and
// holds those of /memories/head until release is closed.
type countingStore struct {
	memtool.Store
	started atomic.Int64
	release chan struct{}
}

func (s *countingStore) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.started.Add(1)
	if name == "head" {
		<-s.release
	}
	return s.Store.Stat(ctx, name)
}

// The calls of one turn run concurrently, but no more than the workers at
// once: while the first call is held, only the next workers-1 start, and
// the answers still come in input order.
func TestExecTurnWorkers(t *testing.T) {
	t.Parallel()
	const workers, calls = 3, 20
	s := &countingStore{Store: memstore.New(), release: make(chan struct{})}
	x := &execServer{mem: memtool.New(s, nil), timeout: time.Minute, workers: workers}
	inputs := []json.RawMessage{json.RawMessage(`{"command":"view","path":"/memories/head"}`)}
	for range calls - 1 {
		inputs = append(inputs, json.RawMessage(`{"command":"view","path":"/memories/other"}`))
	}
	line, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	turn := make(chan []byte, 1)
	go func() { turn <- x.execLine(context.Background(), line) }()

	deadline := time.Now().Add(hangGuard)
	for s.started.Load() < workers && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := s.started.Load(); n != workers {
		t.Errorf("%d calls started while the first was held, want %d", n, workers)
	}
	close(s.release)
	var got []answer
	if err := json.Unmarshal(<-turn, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != calls {
		t.Fatalf("%d answers to %d calls", len(got), calls)
	}
	for i, a := range got {
		want := "/memories/other does not exist"
		if i == 0 {
			want = "/memories/head does not exist"
		}
		if !strings.Contains(a.Text(), want) {
			t.Errorf("answer %d: %q, want it to say %q", i, a.Text(), want)
		}
	}
}

// --timeout takes a positive duration.
func TestExecTimeoutFlag(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"0", "-1s", "soon"} {
		_, errOut, code := runMemtool(t, childEnv(), "", "exec", "--store", "mem:", "--timeout", bad)
		if code != exitUsage {
			t.Errorf("memtool exec --timeout %s: exit %d, want %d\n%s", bad, code, exitUsage, errOut)
		}
		if !strings.Contains(errOut, "timeout") {
			t.Errorf("memtool exec --timeout %s said %q", bad, errOut)
		}
	}
}
