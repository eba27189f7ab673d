package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// slowFirstWrite is a store whose first write of /memories/o.txt is
// slow: it waits until another command looks at that file (a call that
// overtook it), or a moment.
type slowFirstWrite struct {
	memtool.Store
	once    sync.Once
	mu      sync.Mutex
	writing bool
	touched chan struct{}
}

func newSlowFirstWrite() *slowFirstWrite {
	return &slowFirstWrite{Store: memstore.New(), touched: make(chan struct{})}
}

func (s *slowFirstWrite) look(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writing && name == "o.txt" {
		s.writing = false
		close(s.touched)
	}
}

func (s *slowFirstWrite) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.look(name)
	return s.Store.Stat(ctx, name)
}

func (s *slowFirstWrite) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	s.look(name)
	return s.Store.ReadFile(ctx, name, limit)
}

func (s *slowFirstWrite) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if name == "o.txt" {
		s.once.Do(func() {
			s.mu.Lock()
			s.writing = true
			s.mu.Unlock()
			select { // not an assertion: only how long a write may take
			case <-s.touched:
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
	return s.Store.WriteFile(ctx, name, data, mode)
}

const (
	createO  = `{"name":"memory_create","arguments":{"path":"/memories/o.txt","file_text":"x"}}`
	replaceO = `{"name":"memory_str_replace","arguments":{"path":"/memories/o.txt","old_str":"x","new_str":"y"}}`
)

// checkO checks that /memories/o.txt holds y: the create ran, then the
// str_replace.
func checkO(t *testing.T, mem *memtool.Memory, answers string) {
	t.Helper()
	r := mem.Run(context.Background(), []byte(`{"command":"view","path":"/memories/o.txt"}`))
	if r.IsError || !strings.HasSuffix(r.Text, "1\ty") || strings.Contains(answers, `"isError":true`) {
		t.Errorf("a create and then a str_replace of its file ran out of order:\nanswers %s\nfile %q", answers, r.Text)
	}
}

// TestStdioCallsInOrder: a create and a str_replace of its file, sent one
// after the other without waiting, run in that order: the str_replace
// does not overtake the create and fail.
func TestStdioCallsInOrder(t *testing.T) {
	store := newSlowFirstWrite()
	mem := memtool.New(store, nil)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	first := exchange(t, in, out, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+createO+"}\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+replaceO+"}")
	second, _ := out.ReadString('\n')
	checkO(t, mem, first+second)
}

// TestStdioHeldCallCancelled: a call held behind a running one is
// dropped when the client cancels it (it never runs, and is not
// answered), and the running one can still be cancelled.
func TestStdioHeldCallCancelled(t *testing.T) {
	store := &commitThenWait{Store: memstore.New(), committed: make(chan struct{})}
	mem := memtool.New(store, nil)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	go in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + create("c.txt") + "}\n"))
	select {
	case <-store.committed:
	case <-time.After(10 * time.Second):
		t.Fatal("the create did not reach the store")
	}
	first := exchange(t, in, out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+create("d.txt")+"}\n"+
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}`)
	if !strings.Contains(first, `"id":1`) {
		t.Errorf("the first answer: %q", first)
	}
	next := exchange(t, in, out, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_view","arguments":{"path":"/memories"}}}`)
	if !strings.Contains(next, `"id":3`) || strings.Contains(next, "d.txt") || !strings.Contains(next, "c.txt") {
		t.Errorf("after the held call was cancelled: %q", next)
	}
}
