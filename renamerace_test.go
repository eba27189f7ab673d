package memtool_test

import (
	"context"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// parentRemover is a store whose first Rename (or, without Renamer, first
// copy written) finds the new name's parent removed just before: a delete
// of that directory, run in the same turn, landing between the rename's
// mkdir and its move.
type parentRemover struct {
	memtool.Store
	inner  *memstore.Store
	parent string
	once   sync.Once
}

func (s *parentRemover) removeParent(ctx context.Context) {
	s.once.Do(func() { s.inner.Remove(ctx, s.parent) })
}

func (s *parentRemover) WriteFile(ctx context.Context, name string, data []byte, mode memtool.WriteMode) error {
	s.removeParent(ctx)
	return s.Store.WriteFile(ctx, name, data, mode)
}

// renamingParentRemover is a parentRemover with Renamer.
type renamingParentRemover struct{ *parentRemover }

func (s renamingParentRemover) Rename(ctx context.Context, oldname, newname string) error {
	s.removeParent(ctx)
	return memtool.ForwardRename(ctx, s.Store, oldname, newname)
}

// TestRenameParentRemovedMeanwhile: a rename whose new parent, which it
// just made, is removed by a concurrent command before the move answered
// that the path to rename did not exist, though it did. Like create, it
// now makes the parent again and moves.
func TestRenameParentRemovedMeanwhile(t *testing.T) {
	for _, bare := range []bool{false, true} {
		inner := memstore.New()
		seedTree(t, inner, map[string]string{"a": "text of a"})
		var s memtool.Store = renamingParentRemover{&parentRemover{Store: inner, inner: inner, parent: "new"}}
		if bare {
			s = &parentRemover{Store: storetest.Bare(inner), inner: inner, parent: "new"}
		}
		mem := memtool.New(s, nil)
		r := do(mem, "command", "rename", "old_path", "/memories/a", "new_path", "/memories/new/a")
		if want := "Successfully renamed /memories/a to /memories/new/a"; r.Text != want {
			t.Errorf("bare=%v: rename: %q, want %q", bare, r.Text, want)
		}
		wantNames(t, inner, "new/", "new/a")
	}
}
