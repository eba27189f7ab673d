package history_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// readLimits is a real store that records the limits its reads of
// versions are given.
type readLimits struct {
	memtool.Store
	limits []int64
}

func (s *readLimits) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if strings.HasPrefix(name, history.DirName+"/") {
		s.limits = append(s.limits, limit)
	}
	return s.Store.ReadFile(ctx, name, limit)
}

// TestReadLimit: ReadLimit refuses a version larger than its limit with
// memtool.ErrTooLarge, and hands the limit to the store, which does not
// read such a file; a version within it is read whole.
func TestReadLimit(t *testing.T) {
	ctx := context.Background()
	inner := &readLimits{Store: memstore.New()}
	s := history.New(inner, nil)
	if err := s.WriteFile(ctx, "a", []byte("0123456789"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "a", []byte("new"), memtool.Replace); err != nil {
		t.Fatal(err)
	}
	inner.limits = nil
	if data, err := history.ReadLimit(ctx, inner, "/memories/a", 1, 9); !errors.Is(err, memtool.ErrTooLarge) {
		t.Errorf("a 10-byte version with limit 9: %q, %v; want ErrTooLarge", data, err)
	}
	if !slices.Equal(inner.limits, []int64{9}) && len(inner.limits) != 0 {
		t.Errorf("the store read the version with limits %v, want 9", inner.limits)
	}
	if data, err := history.ReadLimit(ctx, inner, "/memories/a", 1, 10); string(data) != "0123456789" || err != nil {
		t.Errorf("with limit 10: %q, %v", data, err)
	}
	if _, err := history.ReadLimit(ctx, inner, "/memories/a", 2, 10); !errors.Is(err, history.ErrNoVersion) {
		t.Errorf("a missing version: %v, want ErrNoVersion", err)
	}
}

// TestDiffLineEnds: Diff counts and shows the lines a file has, as a
// unified diff does: a final newline ends the last line, it does not
// start an empty one, and a last line without one is marked. Before, a
// file ending in a newline had an extra empty line in every hunk that
// reached its end (which patch rejects), and adding or removing only the
// final newline showed as adding or removing an empty line.
func TestDiffLineEnds(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"tea\nno sugar\n", "tea\ntwo sugars\n", "@@ -1,2 +1,2 @@\n tea\n-no sugar\n+two sugars\n"},
		{"x", "x\n", "@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+x\n"},
		{"x\n", "x\n\n", "@@ -1,1 +1,2 @@\n x\n+\n"},
		{"a\nb", "a\nc", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"", "x\n", "@@ -0,0 +1,1 @@\n+x\n"},
		{"x\n", "", "@@ -1,1 +0,0 @@\n-x\n"},
	} {
		if got := history.Diff(c.a, c.b, "a", "b"); got != "--- a\n+++ b\n"+c.want {
			t.Errorf("Diff(%q, %q):\n%s\nwant\n%s", c.a, c.b, got, c.want)
		}
	}
}
