package memtool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// pinnedDirs is a policy over a store without optional capabilities that
// refuses, with a text for the model, to remove a directory named
// "pinned" (its files may go).
type pinnedDirs struct{ memtool.Store }

func (p pinnedDirs) Remove(ctx context.Context, name string) error {
	if name == "pinned" || strings.HasSuffix(name, "/pinned") {
		return memtool.Refusal("The directory " + memtool.VirtualPath(name) + " is pinned and cannot be removed. Nothing was changed.")
	}
	return p.Store.Remove(ctx, name)
}

// TestPartialDeleteRefusedSaysSo: a delete that the store refuses with a
// Refusal after the entry-by-entry fallback removed part of the tree
// tells the model that it was done in part, not the refusal's text,
// which says that nothing was changed.
func TestPartialDeleteRefusedSaysSo(t *testing.T) {
	ctx := context.Background()
	m := memtool.New(pinnedDirs{storetest.Bare(memstore.New())}, nil)
	for _, f := range []string{"a.md", "b.md"} {
		if r := m.Execute(ctx, &memtool.Create{Path: "/memories/pinned/" + f, FileText: f}); r.IsError {
			t.Fatal(r.Text)
		}
	}
	r := m.Execute(ctx, &memtool.Delete{Path: "/memories/pinned"})
	v := m.Execute(ctx, &memtool.View{Path: "/memories/pinned"})
	if strings.Contains(v.Text, "a.md") || strings.Contains(v.Text, "b.md") {
		t.Fatalf("the files were not removed (the view: %q): the test's store did not fail as meant", v.Text)
	}
	want := "Error: The delete command on /memories/pinned was done only in part: the memory store failed part way. View /memories/pinned before trying again"
	if r.Text != want {
		t.Errorf("delete answered %q, want %q", r.Text, want)
	}
}
