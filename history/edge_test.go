package history_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
)

// TestClockBefore1970: a clock before 1970 (a negative Unix time) still
// makes versions that are listed, read and pruned. Before, their entry
// names held two dashes in a row, which the parser refused: the versions
// were written but never listed, read or pruned.
func TestClockBefore1970(t *testing.T) {
	ctx := context.Background()
	now := time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC)
	inner := memstore.New()
	s := history.New(inner, &history.Options{MaxVersions: 2, MaxAge: -1, Now: func() time.Time { return now }})
	if err := s.WriteFile(ctx, "a", []byte("0"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"1", "2", "3"} {
		if err := s.WriteFile(ctx, "a", []byte(text), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	if got := contents(t, inner, "/memories/a"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("versions: %q, want 1 2 (MaxVersions 2)", got)
	}
	vs, _ := history.Versions(ctx, inner, "/memories/a")
	if len(vs) > 0 && !vs[0].Time.Equal(now) {
		t.Errorf("version time %v, want %v", vs[0].Time, now)
	}
}
