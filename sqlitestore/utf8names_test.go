package sqlitestore_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// Directories whose names hold multi-byte characters move and go with
// their whole subtree, and their siblings that extend their name, or sort
// just after it, keep theirs. A rename into the directory's own subtree,
// or onto an existing (even empty) directory, changes nothing.
func TestRenameAndRemoveAllOfMultiByteNames(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path)
	dirs := []string{"é", "éa", "é0", "é.", "é-", "ü", "𝔸", "𝔸𝔸", "a", "a-b", "a/b"}
	for _, d := range dirs {
		if _, err := memtool.MkdirAll(ctx, s, d+"/d/é"); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{d + "/f", d + "/d/g", d + "/d/é/h"} {
			if err := s.WriteFile(ctx, f, []byte(f), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := walkTree(t, s, "")
	r := s.Tree
	if err := r.Rename(ctx, "é", "ﬃ/x"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("rename into a missing parent: %v", err)
	}
	if err := r.Rename(ctx, "é", "é/d/é/x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("rename into its own subtree: %v", err)
	}
	if err := s.Mkdir(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename(ctx, "é", "empty"); !errors.Is(err, memtool.ErrExist) {
		t.Errorf("rename onto an empty directory: %v", err)
	}
	if err := s.Remove(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	if got := walkTree(t, s, ""); !slices.Equal(got, before) {
		t.Fatalf("refused renames changed the tree:\n got %q\nwant %q", got, before)
	}
	if err := r.Rename(ctx, "é", "ü/ñé"); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename(ctx, "𝔸", "x𝔸"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveAll(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	var want []string
	under := func(n, d string) bool { return n == d || strings.HasPrefix(n, d+"/") }
	for _, n := range before {
		switch {
		case under(n, "é"):
			want = append(want, "ü/ñé"+strings.TrimPrefix(n, "é"))
		case under(n, "𝔸"):
			want = append(want, "x𝔸"+strings.TrimPrefix(n, "𝔸"))
		case under(n, "a"):
		default:
			want = append(want, n)
		}
	}
	sort.Strings(want)
	if got := walkTree(t, s, ""); !slices.Equal(got, want) {
		t.Errorf("after the renames and RemoveAll:\n got %q\nwant %q", got, want)
	}
	for _, n := range want {
		if fi, err := s.Stat(ctx, n); err == nil && !fi.IsDir() {
			if data, err := s.ReadFile(ctx, n, 100); err != nil || !strings.HasSuffix(n, strings.SplitN(string(data), "/", 2)[1]) {
				t.Errorf("%s reads %q, %v", n, data, err)
			}
		}
	}
	if o := sqliteOrphans(t, path); len(o) > 0 {
		t.Errorf("orphans: %q", o)
	}
}
