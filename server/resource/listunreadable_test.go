package resource_test

import (
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/server/resource"
)

// TestListingPassesOverUnreadableFiles: a file that does not open (in an
// encrypted memory, one written under a key the server does not hold) is
// listed without a hash, as a file too large to read is, and the listing
// goes on: it failed whole (422), so one such file hid every other file
// of the memory from a sync client, page after page.
func TestListingPassesOverUnreadableFiles(t *testing.T) {
	ctx := t.Context()
	inner := memstore.New()
	mine, _ := encrypt.NewKey("mine")
	theirs, _ := encrypt.NewKey("theirs")
	s, err := encrypt.New(inner, []encrypt.Key{mine}, nil)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := encrypt.New(inner, []encrypt.Key{theirs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]memtool.Store{"a.md": s, "b.md": foreign, "c.md": s} {
		if err := w.WriteFile(ctx, name, []byte(name), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	srv := serveStore(t, s, true, nil)
	for _, limit := range []int{1, 2, 10} {
		got := listAll(t, srv, "", limit, nil)
		if want := []string{"/memories/a.md", "/memories/b.md", "/memories/c.md"}; !slices.Equal(paths(got), want) {
			t.Fatalf("limit %d: listed %v, want %v", limit, paths(got), want)
		}
		for _, e := range got {
			want := ""
			if e.Path != "/memories/b.md" {
				want = resource.ETag([]byte(e.Path[len("/memories/"):]))
				want = want[1 : len(want)-1]
			}
			if e.SHA256 != want {
				t.Errorf("limit %d: %s has SHA-256 %q, want %q", limit, e.Path, e.SHA256, want)
			}
		}
	}
}
