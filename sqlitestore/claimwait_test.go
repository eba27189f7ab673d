package sqlitestore_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
)

// askedCtx is a context that says when it is first asked whether it has
// ended (Err): the method given it has begun.
type askedCtx struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *askedCtx) Err() error {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Err()
}

// TestCancelWhileAnotherClaims checks that a method of a new store whose
// context is cancelled while another method makes the store's first claim
// of its mode (waiting for the file's write lock, held by another
// connection) ends at once with the context's error, as the package
// promises of a cancelled wait, and that the claim goes on: it succeeds
// once the lock is released.
func TestCancelWhileAnotherClaims(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := sqlitestore.Open(path, &sqlitestore.Options{BusyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := holdInConnection(t, path)

	first := make(chan error, 1)
	go func() {
		first <- s.WriteFile(context.Background(), "first", []byte("1"), memtool.CreateOnly)
	}()
	// The first write is making the claim: it waits for the file's lock.
	for !goroutineIn("tenancy.Claim(") {
		runtime.Gosched()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	actx := &askedCtx{Context: ctx, asked: make(chan struct{})}
	second := make(chan error, 1)
	go func() {
		second <- s.WriteFile(actx, "second", []byte("2"), memtool.CreateOnly)
	}()
	<-actx.asked
	cancel()
	err = <-second
	release()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled WriteFile: %v, want context.Canceled", err)
	}
	if err := <-first; err != nil {
		t.Errorf("the write that made the claim, once the lock was released: %v", err)
	}
	if _, err := s.Stat(context.Background(), "second"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("Stat of the cancelled write's file: %v, want ErrNotExist", err)
	}
}

// goroutineIn reports whether a goroutine is running a function whose
// name holds fn.
func goroutineIn(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}
