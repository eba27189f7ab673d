package tenancy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy"
)

// record is a Record in memory. Another process may claim it first
// (racer: its Create records racer's mode), and it may take no writes
// (readOnly).
type record struct {
	mode     string
	racer    string
	readOnly bool
}

func (r *record) Mode(context.Context) (string, error) { return r.mode, nil }

func (r *record) Create(_ context.Context, mode string) error {
	if r.readOnly {
		return memtool.ErrReadOnly
	}
	if r.racer != "" {
		mode = r.racer
	}
	if r.mode == "" {
		r.mode = mode
	}
	return nil
}

func TestClaim(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		rec     record
		mode    string
		claimed bool
		err     error
		after   string
	}{
		{"unused", record{}, tenancy.Single, true, nil, tenancy.Single},
		{"same", record{mode: tenancy.Multi}, tenancy.Multi, true, nil, tenancy.Multi},
		{"single, asked multi", record{mode: tenancy.Single}, tenancy.Multi, false, memtool.ErrTenancy, tenancy.Single},
		{"multi, asked single", record{mode: tenancy.Multi}, tenancy.Single, false, memtool.ErrTenancy, tenancy.Multi},
		{"another process won", record{racer: tenancy.Multi}, tenancy.Single, false, memtool.ErrTenancy, tenancy.Multi},
		{"read-only, unused", record{readOnly: true}, tenancy.Single, false, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			claimed, err := tenancy.Claim(ctx, &c.rec, c.mode)
			if claimed != c.claimed || (c.err == nil) != (err == nil) || !errors.Is(err, c.err) {
				t.Errorf("Claim = %v, %v; want %v, %v", claimed, err, c.claimed, c.err)
			}
			if c.rec.mode != c.after {
				t.Errorf("recorded %q, want %q", c.rec.mode, c.after)
			}
		})
	}
}

func TestListed(t *testing.T) {
	ctx := context.Background()
	for mode, want := range map[string]bool{"": false, tenancy.Multi: true} {
		if ok, err := tenancy.Listed(ctx, &record{mode: mode}); ok != want || err != nil {
			t.Errorf("Listed with mode %q = %v, %v; want %v, nil", mode, ok, err, want)
		}
	}
	if _, err := tenancy.Listed(ctx, &record{mode: tenancy.Single}); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Listed single-tenant: %v, want ErrTenancy", err)
	}
}

// TestGate: a claim that claimed nothing is made again, one that claimed
// is not; an ended context is refused before any claim.
func TestGate(t *testing.T) {
	ctx := context.Background()
	var g tenancy.Gate
	calls := 0
	claim := func(claimed bool) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) { calls++; return claimed, nil }
	}
	for range 2 {
		if err := g.Pass(ctx, claim(false)); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := g.Pass(ctx, claim(true)); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 3 {
		t.Errorf("%d claims, want 3 (two that claimed nothing, one that claimed)", calls)
	}
	if err := tenancy.Claimed(true).Pass(ctx, claim(true)); err != nil || calls != 3 {
		t.Errorf("Claimed(true).Pass = %v after %d claims; want nil, no claim", err, calls)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := new(tenancy.Gate).Pass(cctx, claim(true)); !errors.Is(err, context.Canceled) || calls != 3 {
		t.Errorf("Pass with an ended context = %v after %d claims; want context.Canceled, no claim", err, calls)
	}
}

// TestGateAfterPanic: a claim that panicked leaves the gate unclaimed and
// open: the next Pass claims again instead of waiting for it.
func TestGateAfterPanic(t *testing.T) {
	var g tenancy.Gate
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the claim's panic did not go on")
			}
		}()
		g.Pass(context.Background(), func(context.Context) (bool, error) { panic("claim") })
	}()
	calls := 0
	if err := g.Pass(context.Background(), func(context.Context) (bool, error) { calls++; return true, nil }); err != nil || calls != 1 {
		t.Errorf("Pass after a panicked claim = %v after %d claims; want nil, one claim", err, calls)
	}
}
