package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestTerminatedInTransaction ends the session of an Update in its
// function, with the transaction open and its change not sent yet, as an
// administrator's pg_terminate_backend or a restart does: the server says
// so (FATAL) before it reads the change and the COMMIT, so nothing was
// committed and the Update is not one whose outcome is unknown: it runs
// again on a new connection, and its change is made once.
func TestTerminatedInTransaction(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	app := fmt.Sprintf("memtool_test_terminated_%d", time.Now().UnixNano())
	s := openWith(t, url+"&application_name="+app, pgstore.Options{MaxConns: 1})
	if err := s.WriteFile(ctx, "log", nil, memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	admin := connect(t, url)
	// The first round's statements are new to the connection (pgx
	// prepares them first, in a round trip of its own); the second's were
	// prepared by the first round's second try, on the new connection.
	want := ""
	for round := range 2 {
		calls := 0
		err := s.Update(ctx, "log", 100, func(old []byte) ([]byte, error) {
			if calls++; calls == 1 {
				endSessions(t, admin, app)
			}
			return append(old, "line\n"...), nil
		})
		if err != nil {
			t.Errorf("round %d: Update whose session ended before its change was sent: %v, want it run again", round, err)
		} else {
			want += "line\n"
		}
		if got, err := s.ReadFile(ctx, "log", 100); err != nil || string(got) != want {
			t.Errorf("round %d: after the Update: %q, %v; want %q", round, got, err, want)
		}
	}
}

// TestTerminatedInChange ends the session of each write while the server
// runs its change (a trigger on the table ends its own session, once),
// after the store sent the change and the COMMIT in one batch: the
// server says so before it reaches the COMMIT, so nothing was committed
// and the write, not one whose outcome is unknown, runs again on a new
// connection and makes its change.
func TestTerminatedInChange(t *testing.T) {
	ctx := context.Background()
	for _, op := range storeops.Writes() {
		t.Run(op.Name, func(t *testing.T) {
			url := pgtest.URL(t)
			s := openWith(t, url, pgstore.Options{MaxConns: 1})
			storeops.Seed(t, s)
			admin := connect(t, url)
			if _, err := admin.Exec(ctx, `
				CREATE SEQUENCE memtool_test_changes;
				CREATE FUNCTION memtool_test_terminate() RETURNS trigger AS $$
				BEGIN
					IF nextval('memtool_test_changes') = 1 THEN
						PERFORM pg_terminate_backend(pg_backend_pid());
						PERFORM pg_sleep(10); -- ended at once
					END IF;
					RETURN NULL;
				END $$ LANGUAGE plpgsql;
				CREATE TRIGGER memtool_test_terminate AFTER INSERT OR UPDATE OR DELETE ON memtool_entries
					FOR EACH ROW EXECUTE FUNCTION memtool_test_terminate();`); err != nil {
				t.Fatal(err)
			}
			if err := op.Run(ctx, s); err != nil {
				t.Errorf("%s whose session ended before its COMMIT: %v, want it run again", op.Name, err)
			}
			if !op.Done(ctx, s) {
				t.Errorf("%s: its change is not there", op.Name)
			}
			var changes int64
			if err := admin.QueryRow(ctx, `SELECT last_value FROM memtool_test_changes`).Scan(&changes); err != nil || changes < 2 {
				t.Errorf("the trigger ran %d times (%v), want twice: in the try whose session it ended, and in the next", changes, err)
			}
		})
	}
}
