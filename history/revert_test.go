package history_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/memstore"
)

// refusingWrites is a policy over a store that refuses every file write,
// as a quota or a secret filter over the history wrapper may.
type refusingWrites struct{ memtool.Store }

var errRefused = memtool.Refusal("refused by policy")

func (refusingWrites) WriteFile(context.Context, string, []byte, memtool.WriteMode) error {
	return errRefused
}

// TestRevertRefusedLeavesNothing: reverting a deleted file creates its
// parent directories again; if the write is then refused, Revert fails
// and the directories it created are gone again.
func TestRevertRefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	s := history.New(inner, nil)
	if _, err := memtool.MkdirAll(ctx, s, "d/e"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "d/e/a.md", []byte("text"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := memtool.RemoveAll(ctx, s, "d"); err != nil {
		t.Fatal(err)
	}
	vs, err := history.Versions(ctx, inner, "/memories/d/e/a.md")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions: %+v, %v", vs, err)
	}
	err = history.Revert(ctx, refusingWrites{s}, inner, "/memories/d/e/a.md", vs[0].N)
	if !errors.Is(err, errRefused) {
		t.Fatalf("revert: %v, want the refusal", err)
	}
	if _, err := s.Stat(ctx, "d"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("after a refused revert, d: %v; want it gone, as before", err)
	}
}
