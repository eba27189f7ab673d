package memtool_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// failingReads is a store whose reads of one file fail.
type failingReads struct {
	memtool.Store
	name string
	err  error
}

func (s failingReads) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	if name == s.name {
		return nil, s.err
	}
	return s.Store.ReadFile(ctx, name, limit)
}

// A scan that cannot read a file fails with the store's error, rather
// than answer without that file's lines; a cancelled one fails too. A
// file that vanished meanwhile is skipped.
func TestSearchScanErrors(t *testing.T) {
	ctx := context.Background()
	inner := memstore.New()
	writeFiles(t, inner, 50, func(i int) string { return fmt.Sprintf("f%02d.md", i) }, "tea\n")
	broken := errors.New("disk on fire")
	if _, err := memtool.Search(ctx, failingReads{inner, "f17.md", broken}, memtool.SearchQuery{Query: "tea"}, 0); !errors.Is(err, broken) {
		t.Errorf("Search with a failing read: %v, want %v", err, broken)
	}
	r, err := memtool.Search(ctx, failingReads{inner, "f17.md", memtool.ErrNotExist}, memtool.SearchQuery{Query: "tea"}, 0)
	if err != nil || r.Total != 49 {
		t.Errorf("Search with a file gone: %d lines, %v; want 49", r.Total, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := memtool.Search(cancelled, inner, memtool.SearchQuery{Query: "tea"}, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Search cancelled: %v, want context.Canceled", err)
	}
	mem := memtool.New(inner, nil)
	if r, err := mem.Search(ctx, memtool.SearchQuery{Query: "TEA", Limit: 3}); err != nil || r.Total != 50 || len(r.Matches) != 3 || r.Matches[0].Path != "/memories/f00.md" {
		t.Errorf("Memory.Search: %+v, %v", r, err)
	}
}
