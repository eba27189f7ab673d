package expiry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
)

// TestRestorePurgedMeanwhile: a restore whose file is purged (a gc past
// the grace period) between finding it in the trash and moving it back
// says it is not in the trash, as it would have a moment later, not
// that a file of the trash does not exist.
func TestRestorePurgedMeanwhile(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := expireOne(t, inner)
		clk.Add(8 * 24 * time.Hour)
		h := &renameHooked{Store: inner}
		h.before = func(oldname, _ string) error {
			if strings.HasPrefix(oldname, expiry.TrashName+"/") {
				rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
				if err != nil || len(rep.Purged) != 1 {
					t.Errorf("the purge: %+v, %v", rep, err)
				}
			}
			return nil
		}
		_, err := expiry.Restore(ctx, h, "/memories/a.md", clk.Now())
		if !errors.Is(err, expiry.ErrNotInTrash) {
			t.Errorf("restore of a file purged meanwhile: %v, want ErrNotInTrash", err)
		}
		if _, err := inner.Stat(ctx, "a.md"); !errors.Is(err, memtool.ErrNotExist) {
			t.Errorf("a.md: %v", err)
		}
	})
}
