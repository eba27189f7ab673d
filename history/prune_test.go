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
	"github.com/memtool/memtool/memstore"
)

// PruneAged drops the versions past MaxAge that no change of their path
// dropped: a deleted file's, and an unchanged file's; a younger version
// stays, a dry run drops nothing, and the trash of a delete is not
// touched.
func TestPruneAged(t *testing.T) {
	backendtest.OnLocal(t, func(t *testing.T, inner memtool.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		s := history.New(inner, &history.Options{MaxAge: 48 * time.Hour, Now: func() time.Time { return now }}).(*history.Store)
		write := func(name, text string, mode memtool.WriteMode) {
			t.Helper()
			if err := s.WriteFile(ctx, name, []byte(text), mode); err != nil {
				t.Fatal(err)
			}
		}
		write("gone.md", "one", memtool.CreateOnly)
		write("gone.md", "two", memtool.Replace) // version 1
		if err := s.Remove(ctx, "gone.md"); err != nil {
			t.Fatal(err) // version 2
		}
		if err := s.Mkdir(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		write("d/kept.md", "a", memtool.CreateOnly)
		write("d/kept.md", "b", memtool.Replace) // version 1, old by the end
		now = now.Add(24 * time.Hour)
		write("young.md", "x", memtool.CreateOnly)
		write("young.md", "y", memtool.Replace) // version 1, 48h old by the end: kept
		now = now.Add(48 * time.Hour)

		versions := func(p string) []int {
			vs, err := history.Versions(ctx, inner, p)
			if err != nil {
				t.Fatal(err)
			}
			var ns []int
			for _, v := range vs {
				ns = append(ns, v.N)
			}
			return ns
		}
		dry, err := s.PruneAged(ctx, true)
		if err != nil || len(dry) != 3 {
			t.Fatalf("dry run: %+v, %v; want 3 versions", dry, err)
		}
		if got := versions("/memories/gone.md"); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("the dry run dropped versions: %v left", got)
		}
		pruned, err := s.PruneAged(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range pruned {
			got = append(got, p.Path)
		}
		slices.Sort(got)
		if want := []string{"/memories/d/kept.md", "/memories/gone.md", "/memories/gone.md"}; !slices.Equal(got, want) {
			t.Errorf("pruned %q, want %q", got, want)
		}
		if got := versions("/memories/gone.md"); len(got) != 0 {
			t.Errorf("gone.md keeps versions %v past MaxAge", got)
		}
		if got := versions("/memories/young.md"); !slices.Equal(got, []int{1}) {
			t.Errorf("young.md: versions %v, want [1]", got)
		}
		if again, err := s.PruneAged(ctx, false); err != nil || len(again) != 0 {
			t.Errorf("a second run: %+v, %v", again, err)
		}
		// The memory is as it was: the files, and new versions numbered on.
		write("gone.md", "three", memtool.CreateOnly)
		write("gone.md", "four", memtool.Replace)
		if got := versions("/memories/gone.md"); !slices.Equal(got, []int{3}) {
			t.Errorf("gone.md after a new write: versions %v, want [3]", got)
		}
	})
}

// A negative MaxAge keeps versions for ever: PruneAged (memtool gc) drops
// none, however old, as the pruning after each change drops none for its
// age. The versions of a deleted file are its only copy.
func TestPruneAgedKeepsForEver(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s := history.New(inner, &history.Options{MaxAge: -1, Now: func() time.Time { return now }}).(*history.Store)
	must.Succeed(t, s.WriteFile(ctx, "a.md", []byte("one"), memtool.CreateOnly))
	must.Succeed(t, s.WriteFile(ctx, "a.md", []byte("two"), memtool.Replace))
	must.Succeed(t, s.Remove(ctx, "a.md"))
	now = now.AddDate(10, 0, 0)
	for _, dry := range []bool{true, false} {
		if pruned, err := s.PruneAged(ctx, dry); err != nil || len(pruned) > 0 {
			t.Errorf("PruneAged(dry run %v) with MaxAge < 0: %v, %v; want nothing dropped", dry, pruned, err)
		}
	}
	if vs, err := history.Versions(ctx, inner, "/memories/a.md"); err != nil || len(vs) != 2 {
		t.Errorf("versions left: %d, %v; want 2", len(vs), err)
	}
}
