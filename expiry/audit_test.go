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
	"github.com/memtool/memtool/internal/testclock"
)

// renameHooked is a store that calls before ahead of each rename, and
// after it; before may fail the rename.
type renameHooked struct {
	memtool.Store
	before func(oldname, newname string) error
	after  func(oldname, newname string)
}

func (h *renameHooked) Rename(ctx context.Context, oldname, newname string) error {
	if h.before != nil {
		if err := h.before(oldname, newname); err != nil {
			return err
		}
	}
	err := memtool.ForwardRename(ctx, h.Store, oldname, newname)
	if err == nil && h.after != nil {
		h.after(oldname, newname)
	}
	return err
}

// TestInterruptedCollectSparesConcurrentWrite: a file written through
// the wrapper while Collect moves it stays, with what was written, also
// when Collect stops at a later file (its context cancelled, or the store
// failing): the write succeeded, so the file must not be left in the
// trash.
func TestInterruptedCollectSparesConcurrentWrite(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		bg := context.Background()
		clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
		s := expiry.New(inner, &expiry.Options{Now: clk.Now})
		for _, n := range []string{"a.md", "b.md"} {
			if err := s.WriteFile(bg, n, []byte("old"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
		clk.Add(31 * 24 * time.Hour)
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		h := &renameHooked{Store: inner}
		var first string // the file gc moves first, whichever it is
		h.before = func(oldname, _ string) error {
			switch first {
			case "":
				// The walk found it due; the model writes it now.
				first = oldname
				if err := s.WriteFile(bg, first, []byte("new"), memtool.Replace); err != nil {
					t.Error(err)
				}
			case oldname:
			default:
				if strings.HasPrefix(oldname, expiry.TrashName) {
					return nil // putting back
				}
				cancel() // gc is interrupted at the next file
				return context.Canceled
			}
			return nil
		}
		_, err := expiry.Collect(ctx, h, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted gc: %v, want context.Canceled", err)
		}
		if got, err := inner.ReadFile(bg, first, 1<<20); err != nil || string(got) != "new" {
			t.Errorf("after the interrupted gc, %s holds %q, %v; want the write that succeeded during gc, %q", first, got, err, "new")
		}
	})
}

// TestCollectSparesRenameInFlight: a file renamed through the wrapper
// into a name whose earlier file was removed (its access still in the
// index), while a Collect runs from start to end between the rename and
// its return, was used just now: it must not expire under the model,
// whose rename then succeeds.
func TestCollectSparesRenameInFlight(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		clk := testclock.New(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
		h := &renameHooked{Store: inner}
		s := expiry.New(h, &expiry.Options{Now: clk.Now})
		for _, n := range []string{"a.md", "b.md"} {
			if err := s.WriteFile(ctx, n, []byte("text of "+n), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
		clk.Add(31 * 24 * time.Hour)
		if err := s.Remove(ctx, "a.md"); err != nil {
			t.Fatal(err)
		}
		h.after = func(string, string) {
			if _, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, Now: clk.Now}); err != nil {
				t.Error(err)
			}
		}
		if err := s.(memtool.Renamer).Rename(ctx, "b.md", "a.md"); err != nil {
			t.Fatal(err)
		}
		if got, err := inner.ReadFile(ctx, "a.md", 1<<20); err != nil || string(got) != "text of b.md" {
			t.Errorf("a.md holds %q, %v after b.md was renamed to it; want %q", got, err, "text of b.md")
		}
	})
}
