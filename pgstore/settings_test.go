package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestSessionSettings checks that the store's sessions carry its timeouts,
// so that the server ends what the store gave up on: a lock wait, a
// statement, and a transaction left idle by a client that stopped
// answering.
func TestSessionSettings(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), &Options{OpTimeout: 7 * time.Second, LockTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for setting, want := range map[string]string{
		"lock_timeout":                        "3s",
		"statement_timeout":                   "7s",
		"idle_in_transaction_session_timeout": "7s",
	} {
		var got string
		if err := s.db.pool.QueryRow(ctx, "SHOW "+setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", setting, got, want)
		}
	}
}
