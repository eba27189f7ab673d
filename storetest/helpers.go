package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
)

// Together runs the functions at the same moment, each in its goroutine,
// as the SDK runners run one turn's tool calls, and waits for all of them.
func Together(fns ...func()) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn()
		}()
	}
	close(start)
	wg.Wait()
}

// Answer runs fn and returns its error, failing the test if fn has not
// returned after 30 seconds, far longer than any bounded wait a store may
// make: a store test uses it where the bug it guards against is a hang.
func Answer(t *testing.T, what string, fn func() error) error {
	t.Helper()
	const hang = 30 * time.Second
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hang):
		t.Fatalf("%s: no answer after %v", what, hang)
		return nil
	}
}

// Opened takes the results of a store's constructor: it fails t if err is
// not nil, and otherwise closes s when t ends and returns it.
//
//	s, err := sqlitestore.Open(path, nil)
//	return storetest.Opened(t, s, err)
func Opened[S interface{ Close() error }](t testing.TB, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Call runs one tool input, written as the JSON object the model sends
// ({"command": "view", "path": …}), through mem, and returns its result:
// for the tests of wrappers, which check what a command leaves behind.
func Call(t testing.TB, mem *memtool.Memory, in map[string]any) memtool.Result {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return mem.Run(context.Background(), b)
}
