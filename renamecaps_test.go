package memtool_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storetest"
)

// TestRenameKeepsDescendantsWithinPathCaps: renaming a directory to a
// longer or deeper name moved its entries past MaxPathBytes or MaxDepth,
// and from then on every command on them (view, edit, delete, rename) was
// refused as too long or too deep: memories the model could no longer
// reach. Such a rename is now refused, naming the limit, and changes
// nothing; one that keeps every path within the caps still works.
func TestRenameKeepsDescendantsWithinPathCaps(t *testing.T) {
	// 31 names below a: /memories/a/d/d/…/f.md is 32 levels deep.
	deep := "/memories/a" + strings.Repeat("/d", 30) + "/f.md"
	// /memories/b/…/g.md of exactly MaxPathBytes bytes.
	long := "/memories/b/" + strings.Repeat("x", 250) + "/" + strings.Repeat("y", 250) + "/" + strings.Repeat("z", 250) + "/" + strings.Repeat("v", 200) + "/"
	long += strings.Repeat("w", memtool.MaxPathBytes-len(long)-len(".md")) + ".md"
	for _, b := range []string{"memstore", "filestore"} {
		for _, bare := range []bool{false, true} {
			s := backend(t, b)(t)
			if bare {
				s = storetest.Bare(s) // the copy-and-remove fallback
			}
			mem := memtool.New(s, nil)
			for _, p := range []string{deep, long} {
				if r := do(mem, "command", "create", "path", p, "file_text", "keep me"); r.IsError {
					t.Fatalf("%s: create %s: %s", b, p, r.Text)
				}
			}
			before := storetest.Names(t, s)
			for _, c := range []struct{ from, to, want string }{
				{"/memories/a", "/memories/n/a", "too deep: 33 levels below /memories, more than the limit of 32"},
				{"/memories/b", "/memories/bb", "too long: 1025 bytes, more than the limit of 1024 bytes"},
				{"/memories/b/", "/memories/q/b", "too long: 1026 bytes, more than the limit of 1024 bytes"},
			} {
				r := do(mem, "command", "rename", "old_path", c.from, "new_path", c.to)
				if !r.IsError || !strings.Contains(r.Text, c.want) || !strings.Contains(r.Text, "Nothing was changed") {
					t.Errorf("%s bare=%v: rename %s to %s: %q, want an error saying %q", b, bare, c.from, c.to, r.Text, c.want)
				}
			}
			wantNames(t, s, before...)
			// Same length, or shorter and shallower: no walk needed, and fine.
			for _, c := range [][2]string{{"/memories/a", "/memories/c"}, {"/memories/b", "/memories/e"}, {"/memories/c/d", "/memories/c/e"}} {
				if r := do(mem, "command", "rename", "old_path", c[0], "new_path", c[1]); r.IsError {
					t.Errorf("%s bare=%v: rename %s to %s: %s", b, bare, c[0], c[1], r.Text)
				}
			}
			for _, p := range []string{"/memories/c/e" + strings.TrimPrefix(deep, "/memories/a/d"), "/memories/e" + strings.TrimPrefix(long, "/memories/b")} {
				if r := do(mem, "command", "view", "path", p); r.IsError || !strings.Contains(r.Text, "keep me") {
					t.Errorf("%s bare=%v: view %s: %q", b, bare, p, r.Text)
				}
			}
		}
	}
}

// unreadableDir is a memstore whose directory dir cannot be listed (an
// operator's directory without read permission); it renames as memstore.
type unreadableDir struct {
	*memstore.Store
	dir string
}

func (s unreadableDir) ReadDir(ctx context.Context, name string) ([]memtool.FileInfo, error) {
	if name == s.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	return s.Store.ReadDir(ctx, name)
}

// The check of a growing rename is a guard, not a condition: a tree it
// cannot read all of is renamed as before the check existed, not refused
// with an internal error.
func TestRenameGrowsPastUnreadableDirectory(t *testing.T) {
	inner := memstore.New()
	mem := memtool.New(inner, nil)
	if r := do(mem, "command", "create", "path", "/memories/a/locked/f.md", "file_text", "t"); r.IsError {
		t.Fatal(r.Text)
	}
	mem = memtool.New(unreadableDir{inner, "a/locked"}, nil)
	if r := do(mem, "command", "rename", "old_path", "/memories/a", "new_path", "/memories/archive/a"); r.IsError {
		t.Fatalf("rename: %s", r.Text)
	}
	if _, err := inner.Stat(context.Background(), "archive/a/locked/f.md"); err != nil {
		t.Errorf("not moved: %v", err)
	}
}
