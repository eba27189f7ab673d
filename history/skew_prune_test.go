package history_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/internal/must"
)

// onShared runs fn on a new store of each backend that several processes
// share: a directory, SQLite, PostgreSQL.
func onShared(t *testing.T, fn func(t *testing.T, inner memtool.Store)) {
	for _, b := range backendtest.All() {
		if b.Name == "filestore" || b.Name == "sqlite" || b.Name == "postgres" {
			t.Run(b.Name, func(t *testing.T) { fn(t, b.Open(t)) })
		}
	}
}

// slowDelete has a file written and edited by a process with the right
// clock (version 1, at now), then deleted by one whose clock is 40 days
// behind (version 2, the deleted content, stamped 40 days ago).
func slowDelete(t *testing.T, inner memtool.Store, now time.Time) {
	ctx := context.Background()
	right := history.New(inner, &history.Options{Now: func() time.Time { return now }})
	slow := history.New(inner, &history.Options{Now: func() time.Time { return now.Add(-40 * 24 * time.Hour) }})
	must.Succeed(t, right.WriteFile(ctx, "a.md", []byte("one"), memtool.CreateOnly))
	must.Succeed(t, right.WriteFile(ctx, "a.md", []byte("two"), memtool.Replace))
	must.Succeed(t, slow.Remove(ctx, "a.md"))
}

func versionNumbers(t *testing.T, inner memtool.Store, p string) []int {
	t.Helper()
	vs, err := history.Versions(context.Background(), inner, p)
	if err != nil {
		t.Fatal(err)
	}
	var ns []int
	for _, v := range vs {
		ns = append(ns, v.N)
	}
	return ns
}

// TestPruneAgedSlowDeleter: the version a delete kept is the deleted
// file's only copy. Made by a process whose clock is 40 days behind, it
// is stamped 40 days back; an hour later, memtool gc (PruneAged, MaxAge
// 30 days) with the right clock must not take it for 40 days old: it
// came after version 1, made an hour before gc by the right clock.
func TestPruneAgedSlowDeleter(t *testing.T) {
	onShared(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		slowDelete(t, inner, now)
		gc := history.New(inner, &history.Options{Now: func() time.Time { return now.Add(time.Hour) }}).(*history.Store)
		if _, err := gc.PruneAged(ctx, false); err != nil {
			t.Fatal(err)
		}
		if got := versionNumbers(t, inner, "/memories/a.md"); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("versions %v after gc an hour after the delete; want [1 2] (2 is the deleted content)", got)
		}
		// Past MaxAge by every clock, both go.
		gc = history.New(inner, &history.Options{Now: func() time.Time { return now.Add(31 * 24 * time.Hour) }}).(*history.Store)
		if pruned, err := gc.PruneAged(ctx, false); err != nil || len(pruned) != 2 {
			t.Errorf("gc 31 days on: %+v, %v; want both versions dropped", pruned, err)
		}
	})
}

// TestPruneSlowDeleterOnChange: the pruning after a change by a process
// with the right clock does not drop the slow delete's version either
// (prune judges ages by settled(versions), as PruneAged does).
func TestPruneSlowDeleterOnChange(t *testing.T) {
	onShared(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		slowDelete(t, inner, now)
		right := history.New(inner, &history.Options{Now: func() time.Time { return now.Add(time.Hour) }})
		must.Succeed(t, right.WriteFile(ctx, "a.md", []byte("three"), memtool.CreateOnly))
		must.Succeed(t, right.WriteFile(ctx, "a.md", []byte("four"), memtool.Replace))
		if got := versionNumbers(t, inner, "/memories/a.md"); !slices.Equal(got, []int{1, 2, 3}) {
			t.Errorf("versions %v after an edit an hour after the delete; want [1 2 3] (2 is the deleted content)", got)
		}
	})
}
