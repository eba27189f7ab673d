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

// namesStore is a NameLister over a memory store that counts Stat calls.
type namesStore struct {
	memtool.Store
	stats atomic.Int64
}

func (s *namesStore) Stat(ctx context.Context, name string) (memtool.FileInfo, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, name)
}

func (s *namesStore) ListNames(ctx context.Context, name string) ([]string, error) {
	infos, err := s.Store.ReadDir(ctx, name)
	names := make([]string, len(infos))
	for i, fi := range infos {
		names[i] = fi.Name
	}
	return names, err
}

// Over a NameLister, a listing of a large directory Stats only the
// entries it shows, and answers as the listing by ReadDir does.
func TestListingStatsOnlyWhatItShows(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	for i := range 3000 {
		if err := inner.WriteFile(ctx, fmt.Sprintf("n%04d.md", 2999-i), []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
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
