package memtool_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// namesStore is a NameLister over a memory store that counts Stat and
// ListNames calls. Its ListNames also gives the names in phantoms, which
// Stat reports missing (as a directory store's links out are reported
// irregular).
type namesStore struct {
	memtool.Store
	phantoms    []string
	stats, list atomic.Int64
}

func (s *namesStore) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, name)
}

func (s *namesStore) ListNames(ctx context.Context, name string, fn func(string) bool) error {
	s.list.Add(1)
	infos, err := s.Store.ReadDir(ctx, name)
	if err != nil {
		return err
	}
	for _, fi := range infos {
		if !fn(fi.Name) {
			return nil
		}
	}
	if name == "" {
		for _, n := range s.phantoms {
			if !fn(n) {
				return nil
			}
		}
	}
	return nil
}

// Over a NameLister, a listing of a large directory Stats only the
// entries it shows, and answers as the listing by ReadDir does.
func TestListingStatsOnlyWhatItShows(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	writeFiles(t, inner, 3000, func(i int) string { return fmt.Sprintf("n%04d.md", 2999-i) }, "x")
	s := &namesStore{Store: inner}
	in := []byte(`{"command":"view","path":"/memories"}`)
	got := memtool.New(s, nil).Run(ctx, in)
	want := memtool.New(inner, nil).Run(ctx, in)
	if got != want {
		t.Fatalf("by names:\n%.300s\nby ReadDir:\n%.300s", got.Text, want.Text)
	}
	shown := strings.Count(got.Text, "\n1B\t")
	if !strings.Contains(got.Text, "itself holds 3000 names") || shown < 500 {
		t.Fatalf("unexpected listing (%d entries shown):\n%.300s", shown, got.Text)
	}
	// The root's own Stat, one for each entry shown, and one for each of
	// the few measured past the cut before the view knew it was cut
	// (they fill the room kept for the note: 300 characters, at least
	// 20 per line here).
	if n := s.stats.Load(); n > int64(shown)+1+300/20 {
		t.Errorf("the listing made %d Stat calls for %d entries shown", n, shown)
	}
}

// When the smallest names turn out unusable, a listing by names reads the
// names again for the next smallest, as often as it takes, and answers as
// the listing by ReadDir does.
func TestListingByNamesSkipsUnusable(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	writeFiles(t, inner, 3000, func(i int) string { return fmt.Sprintf("n%04d.md", i) }, "x")
	// More unusable names, all smaller than every usable one, than one
	// batch holds (a batch is at most 16,000/15 names here).
	var phantoms []string
	for i := range 2500 {
		phantoms = append(phantoms, fmt.Sprintf("a%04d.md", i))
	}
	s := &namesStore{Store: inner, phantoms: phantoms}
	in := []byte(`{"command":"view","path":"/memories"}`)
	got := memtool.New(s, nil).Run(ctx, in)
	want := memtool.New(inner, nil).Run(ctx, in)
	// The note counts the names, unusable ones included (D17).
	want.Text = strings.Replace(want.Text, "itself holds 3000 names", "itself holds 5500 names", 1)
	if got != want {
		t.Fatalf("by names:\n%.300s\nby ReadDir:\n%.300s", got.Text, want.Text)
	}
	if n := s.list.Load(); n < 3 {
		t.Errorf("ListNames was called %d times; the phantoms fill more than two batches", n)
	}
}
