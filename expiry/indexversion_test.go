package expiry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// TestNewerIndexLeftAlone: an access index of a later format (a newer
// memtool's) is neither rewritten in this one's format, which would drop
// what it does not know, nor read as this one's: uses are not recorded
// over it (OnError hears why), Collect expires nothing, and ResetIndex
// leaves it.
func TestNewerIndexLeftAlone(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	newer := `{"version":2,"access":{"a.md":1},"unit":"ms"}`
	must.Succeed(t, inner.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly))
	must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(newer), memtool.CreateOnly))
	var heard []error
	now := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	s := expiry.New(inner, &expiry.Options{Now: func() time.Time { return now }, OnError: func(err error) { heard = append(heard, err) }})
	must.Succeed(t, s.WriteFile(ctx, "b.md", []byte("beta"), memtool.CreateOnly))
	if _, err := s.ReadFile(ctx, "a.md", 100); err != nil {
		t.Fatal(err)
	}
	must.Succeed(t, s.Remove(ctx, "b.md"))
	if got := storetest.ReadText(t, inner, expiry.IndexName); got != newer {
		t.Errorf("the newer index was rewritten: %s", got)
	}
	if len(heard) == 0 || !strings.Contains(heard[0].Error(), "newer") {
		t.Errorf("OnError heard %v, want the index's format named", heard)
	}
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: time.Hour, Now: func() time.Time { return now.Add(1000 * time.Hour) }})
	if err == nil || len(rep.Expired) != 0 {
		t.Errorf("Collect over a newer index: %+v, %v; want an error and nothing expired", rep, err)
	}
	if err := expiry.ResetIndex(ctx, inner); err == nil || errors.Is(err, expiry.ErrIndexReadable) {
		t.Errorf("ResetIndex of a newer index = %v, want a refusal naming it", err)
	}
	if got := storetest.ReadText(t, inner, expiry.IndexName); got != newer {
		t.Errorf("the newer index was changed: %s", got)
	}
	if storetest.ReadText(t, inner, "a.md") != "alpha" {
		t.Error("a.md is gone")
	}
}
