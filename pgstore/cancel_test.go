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

// TestRefusedWriteLostRollback makes the server refuse a write's change in
// the batch of its COMMIT (a row another session holds, past the lock
// timeout) and then loses the connection during the ROLLBACK: the server
// has said that nothing was changed, so the write fails (the ROLLBACK's
// timeout ends it), but not with an error that says the change may have
// been made.
func TestRefusedWriteLostRollback(t *testing.T) {
	ctx := context.Background()
	direct := pgtest.URL(t)
	p, s := openProxied(t, direct)
	storeops.Seed(t, s)
	holder := connect(t, direct)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM memtool_entries WHERE tenant = '' AND parent = '' AND name = 'kept' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// The write reads "kept" without its row lock, and its upsert waits
	// for the row in the batch of the COMMIT; the ROLLBACK after the
	// refusal gets no answer.
	p.freezeAfter([]byte("rollback"))
	err = s.WriteFile(ctx, "kept", []byte("refused"), memtool.Replace)
	if err == nil || errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("WriteFile refused by the server, its ROLLBACK lost: %v, want an error that is not ErrOutcomeUnknown", err)
	}
	p.resume()
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadFile(ctx, "kept", 100); err != nil || string(got) != "kept" {
		t.Errorf("after the refused WriteFile: %q, %v; want %q", got, err, "kept")
	}
}
