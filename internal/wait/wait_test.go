package wait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtool/memtool/internal/wait"
)

func TestSleep(t *testing.T) {
	start := time.Now()
	if err := wait.Sleep(t.Context(), 20*time.Millisecond); err != nil || time.Since(start) < 20*time.Millisecond {
		t.Errorf("Sleep(20ms) = %v after %v, want nil after 20ms or more", err, time.Since(start))
	}
	if err := wait.Sleep(t.Context(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	if err := wait.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(1h) with the context cancelled = %v, want context.Canceled", err)
	}
	if err := wait.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(0) on an ended context = %v, want context.Canceled", err)
	}
}

func TestTurn(t *testing.T) {
	turn := make(chan struct{}, 1)
	if err := wait.Turn(t.Context(), turn, time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("a free turn: %v", err)
	}
	if err := wait.Turn(t.Context(), turn, time.Now().Add(10*time.Millisecond)); !errors.Is(err, wait.ErrDeadline) {
		t.Errorf("a held turn past the deadline: %v, want ErrDeadline", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := wait.Turn(ctx, turn, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("a held turn, the context ended: %v, want context.Canceled", err)
	}
	time.AfterFunc(10*time.Millisecond, func() { <-turn })
	if err := wait.Turn(t.Context(), turn, time.Now().Add(time.Hour)); err != nil {
		t.Errorf("a turn given up while waiting: %v", err)
	}
}
