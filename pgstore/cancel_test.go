package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestCancelledBeforeCommit cancels an Update's context in its function,
// after the read and before the write-back and the COMMIT are sent:
// nothing was sent that could change the file, so the Update fails with
// the context's error, not with one that says the change may have been
// made, and the file is as it was.
func TestCancelledBeforeCommit(t *testing.T) {
	s := openWith(t, pgtest.URL(t), short)
	storeops.Seed(t, s)
	before, err := s.ReadFile(context.Background(), "kept", 100)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = s.Update(ctx, "kept", 100, func([]byte) ([]byte, error) {
		cancel()
		return []byte("after the cancellation"), nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("Update cancelled before its commit was sent: %v, want context.Canceled and not ErrOutcomeUnknown", err)
	}
	if got, err := s.ReadFile(context.Background(), "kept", 100); err != nil || string(got) != string(before) {
		t.Errorf("after the cancelled Update: %q, %v; want %q", got, err, before)
	}
}
