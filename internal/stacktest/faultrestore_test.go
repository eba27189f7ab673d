package stacktest

import (
	"context"
	"testing"
	"time"

	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/memstore"
)

// A restore whose record of the use fails, because the access index
// cannot be written, fails having changed nothing. Before, the file was
// moved back first and Restore then answered the index's error: memtool
// restore reported a failure for a file it had restored.
func TestRestoreIndexFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []faultMode{failBefore, failAfterFn} {
		t.Run(mode.String(), func(t *testing.T) {
			fault := newFaultStore(memstore.New())
			st := newStack(t, fault, stackOptions{expiry: &expiry.Options{Now: setupClock}})
			st.mustRun(t, create("/memories/a.md", "alpha"))
			if _, err := expiry.Collect(ctx, st.belowExpiry, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: runClock}); err != nil {
				t.Fatal(err)
			}
			fault.armOn(mode, 1, "update", expiry.IndexName)
			_, err := expiry.Restore(ctx, st.belowExpiry, "/memories/a.md", runClock())
			if _, hit := fault.disarm(); hit == "" {
				t.Fatal("the restore did not update the index")
			}
			_, serr := st.top.Stat(ctx, "a.md")
			if err == nil {
				t.Fatalf("Restore succeeded with the index failing (the file: %v)", serr)
			}
			if serr == nil {
				t.Errorf("Restore failed (%v), but the file is back", err)
			}
			// Once the index can be written again, the restore works.
			if _, err := expiry.Restore(ctx, st.belowExpiry, "/memories/a.md", runClock()); err != nil {
				t.Fatalf("Restore again: %v", err)
			}
			if got, err := st.top.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "alpha" {
				t.Errorf("restored: %q, %v", got, err)
			}
		})
	}
}
