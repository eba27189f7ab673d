package expiry_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/memstore"
)

// A rename that fails (newname is taken: ErrExist) moved nothing, so the
// files in the way are not used by it: d/x.md, unused for 31 days, still
// expires, and the file that did not move keeps its own last use.
func TestFailedRenameRecordsNoUse(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	clk := testclock.New(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	must.Succeed(t, s.Mkdir(ctx, "d"))
	must.Succeed(t, s.WriteFile(ctx, "d/x.md", []byte("old"), memtool.CreateOnly))
	clk.Add(10 * 24 * time.Hour)
	must.Succeed(t, s.WriteFile(ctx, "a.md", []byte("a"), memtool.CreateOnly))
	clk.Add(21 * 24 * time.Hour)
	if err := s.(memtool.Renamer).Rename(ctx, "a.md", "d"); !errors.Is(err, memtool.ErrExist) {
		t.Fatalf("rename onto a directory: %v, want ErrExist", err)
	}
	clk.Add(2 * time.Hour)
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, DryRun: true, Now: clk.Now})
	must.Succeed(t, err)
	var got []string
	for _, e := range rep.Expired {
		got = append(got, e.Path)
	}
	if len(got) != 1 || got[0] != "/memories/d/x.md" {
		t.Errorf("expired %q, want only /memories/d/x.md (unused for 31 days; a.md for 21)", got)
	}
}

// An edit that finds no file takes back the use it recorded before it ran
// where the index held none for the name (never.md), so that edits of
// names that hold nothing leave the index as it was. Where it held one
// (gone.md, removed by another program), the edit keeps its use: the
// older one cannot be given back safely (TestFailedEditLeavesNewFilesUse),
// and the file written there since is kept the longer for it.
func TestFailedEditKeepsLastUse(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	clk := testclock.New(time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC))
	s := expiry.New(inner, &expiry.Options{Now: clk.Now})
	must.Succeed(t, s.WriteFile(ctx, "gone.md", []byte("x"), memtool.CreateOnly))
	must.Succeed(t, s.WriteFile(ctx, "kept.md", []byte("y"), memtool.CreateOnly))
	must.Succeed(t, inner.Remove(ctx, "gone.md")) // around the wrapper
	clk.Add(31 * 24 * time.Hour)
	edit := func(old []byte) ([]byte, error) { return append(old, '!'), nil }
	for _, name := range []string{"gone.md", "never.md"} {
		if err := s.Update(ctx, name, 100, edit); !errors.Is(err, memtool.ErrNotExist) {
			t.Fatalf("edit of %s, which holds no file: %v, want ErrNotExist", name, err)
		}
	}
	index, err := inner.ReadFile(ctx, expiry.IndexName, 1<<20)
	must.Succeed(t, err)
	if bytes.Contains(index, []byte("never.md")) {
		t.Errorf("index %s names never.md, which never held a file", index)
	}
	must.Succeed(t, inner.WriteFile(ctx, "gone.md", []byte("back"), memtool.CreateOnly)) // around the wrapper again
	clk.Add(time.Hour)
	rep, err := expiry.Collect(ctx, inner, expiry.CollectOptions{UnusedFor: 30 * 24 * time.Hour, DryRun: true, Now: clk.Now})
	must.Succeed(t, err)
	var got []string
	for _, e := range rep.Expired {
		got = append(got, e.Path)
	}
	if len(got) != 1 || got[0] != "/memories/kept.md" {
		t.Errorf("expired %q, want only /memories/kept.md", got)
	}
}
