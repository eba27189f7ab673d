package expiry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/memstore"
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

// TestDamagedIndex: an access index that does not parse neither stops
// the memory tool (a use that cannot be recorded goes to OnError) nor
// lets gc expire anything: gc fails, having moved nothing.
func TestDamagedIndex(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := expireOne(t, inner)
		var failures int
		mem := memtool.New(expiry.New(inner, &expiry.Options{Now: clk.Now, OnError: func(error) { failures++ }}), nil)
		if r := run(t, mem, map[string]any{"command": "create", "path": "/memories/b.md", "file_text": "beta"}); r.IsError {
			t.Fatal(r.Text)
		}
		must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(`{"version":1,"access":{"b.md":`), memtool.Replace))
		for _, in := range []map[string]any{
			{"command": "view", "path": "/memories/b.md"},
			{"command": "create", "path": "/memories/c.md", "file_text": "gamma"},
			{"command": "str_replace", "path": "/memories/b.md", "old_str": "beta", "new_str": "BETA"},
			{"command": "view", "path": "/memories"},
		} {
			if r := run(t, mem, in); r.IsError {
				t.Errorf("%v with the index damaged: %s", in, r.Text)
			}
		}
		if failures == 0 {
			t.Error("no failure to record reached OnError")
		}
		clk.Add(365 * 24 * time.Hour)
		rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if err == nil || len(rep.Expired) != 0 {
			t.Errorf("gc with the index damaged: %+v, %v; want an error, nothing expired", rep, err)
		}
		for _, name := range []string{"b.md", "c.md"} {
			if _, err := inner.Stat(ctx, name); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		// ResetIndex removes it; uses are recorded again, and gc runs,
		// expiring nothing that was used since.
		must.Succeed(t, expiry.ResetIndex(ctx, inner))
		failures = 0
		if r := run(t, mem, map[string]any{"command": "view", "path": "/memories/b.md"}); r.IsError || failures != 0 {
			t.Errorf("a view after the reset: %s, %d failures to record", r.Text, failures)
		}
		if err := expiry.ResetIndex(ctx, inner); !errors.Is(err, expiry.ErrIndexReadable) {
			t.Errorf("ResetIndex of a readable index: %v, want ErrIndexReadable", err)
		}
		rep, err = expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if err != nil || len(rep.Expired) != 0 {
			t.Errorf("gc after the reset: %+v, %v; want nothing expired", rep, err)
		}
	})
}

// TestIndexPastItsBound: an access index larger than the 64 MiB the
// wrappers and Collect read (some half a million files) is as a damaged
// one: the memory tool goes on, gc fails having moved nothing, and says
// why.
func TestIndexPastItsBound(t *testing.T) {
	inner := memstore.New()
	ctx := context.Background()
	clk := expireOne(t, inner)
	mem := memtool.New(expiry.New(inner, &expiry.Options{Now: clk.Now}), nil)
	if r := run(t, mem, map[string]any{"command": "create", "path": "/memories/b.md", "file_text": "beta"}); r.IsError {
		t.Fatal(r.Text)
	}
	var big strings.Builder
	big.WriteString(`{"version":1,"access":{"b.md":1`)
	long := strings.Repeat("x", 200)
	for i := 0; big.Len() <= 64<<20; i++ {
		fmt.Fprintf(&big, `,"%s/%d":1`, long, i)
	}
	big.WriteString("}}")
	must.Succeed(t, inner.WriteFile(ctx, expiry.IndexName, []byte(big.String()), memtool.Replace))
	clk.Add(2 * time.Hour) // the view records its use, and fails to
	if r := run(t, mem, map[string]any{"command": "view", "path": "/memories/b.md"}); r.IsError {
		t.Errorf("view with the index too large: %s", r.Text)
	}
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
	if !errors.Is(err, memtool.ErrTooLarge) || len(rep.Expired) != 0 {
		t.Errorf("gc with the index too large: %+v, %v; want ErrTooLarge, nothing expired", rep, err)
	}
	if _, err := inner.Stat(ctx, "b.md"); err != nil {
		t.Errorf("b.md: %v", err)
	}
	must.Succeed(t, expiry.ResetIndex(ctx, inner))
	if _, err := inner.Stat(ctx, expiry.IndexName); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the index past its bound is still there after ResetIndex: %v", err)
	}
	if err := expiry.ResetIndex(ctx, inner); err != nil {
		t.Errorf("ResetIndex with no index: %v", err)
	}
}

// TestFind: Find names where the trash keeps an expired file, and what
// Restore would answer for it, and moves nothing; a path not in the trash
// is ErrNotInTrash, and a bad path the path gate's error.
func TestFind(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		expireOne(t, inner)
		src, got, err := expiry.Find(ctx, inner, "/memories/a.md")
		must.Succeed(t, err)
		if !strings.HasPrefix(src, expiry.TrashName+"/") || !strings.HasSuffix(src, "/a.md") || got.Path != "/memories/a.md" || got.Expired.IsZero() {
			t.Errorf("Find = %q, %+v", src, got)
		}
		if data, err := inner.ReadFile(ctx, src, 100); err != nil || len(data) == 0 {
			t.Errorf("the trashed file at %s: %q, %v", src, data, err)
		}
		for _, p := range []string{"/memories/b.md", "/memories", "/memories/a.md/"} {
			if _, _, err := expiry.Find(ctx, inner, p); !errors.Is(err, expiry.ErrNotInTrash) {
				t.Errorf("Find(%s) = %v, want ErrNotInTrash", p, err)
			}
		}
		var pe *memtool.PathError
		if _, _, err := expiry.Find(ctx, inner, "/etc/passwd"); !errors.As(err, &pe) {
			t.Errorf("Find(/etc/passwd) = %v, want a path error", err)
		}
	})
}
