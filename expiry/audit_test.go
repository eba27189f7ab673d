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
