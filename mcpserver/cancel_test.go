package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// commitThenWait is a store whose WriteFile makes its change, says so on
// committed, and returns only once the call's context is cancelled: a
// tools/call cancelled after the store changed. It returns nil, as a
// store must once its change is made.
type commitThenWait struct {
	memtool.Store
	committed chan struct{}
}

func (s *commitThenWait) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	if err := s.Store.WriteFile(ctx, name, data, mode); err != nil {
		return err
	}
	close(s.committed)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return nil
}

// TestCancelledAfterChange: a tools/call cancelled (notifications/
// cancelled) after the store made its change is not answered as if
// nothing had changed: the answer says the file was created.
func TestCancelledAfterChange(t *testing.T) {
	store := &commitThenWait{Store: memstore.New(), committed: make(chan struct{})}
	mem := memtool.New(store, nil)
	in, out := stdioServer(t, mem)
	exchange(t, in, out, stdioInitialize)
	go in.Write([]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":` + create("c.txt") + "}\n"))
	select {
	case <-store.committed:
	case <-time.After(10 * time.Second):
		t.Fatal("the create did not reach the store")
	}
	answer := exchange(t, in, out, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}`)
	if !strings.Contains(answer, `"id":9`) || !strings.Contains(answer, "File created successfully at: /memories/c.txt") {
		t.Errorf("the answer to a call cancelled after its change: %q", answer)
	}
	if !strings.Contains(listing(t, mem), "c.txt") {
		t.Error("c.txt is not there")
	}
}
