package objectstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memtool/memtool"
)

// A file created by a write with Replace (a PUT of the HTTP resource API
// without preconditions, a revert of a deleted file) in a directory that
// another process renames at that moment ends in the moved tree, or the
// write fails with ErrNotExist, as a create-only write does: it is never
// left in the old directory without its marker, where it is listed but
// its directory does not exist.
func TestS3ReplaceCreateDuringDirRename(t *testing.T) {
	ctx := context.Background()
	mine, il, err := writeDuringDirRename(t, memtool.Replace)
	if e := il.err(t); e != nil {
		t.Fatalf("the other process's rename: %v", e)
	}
	if err != nil && !errors.Is(err, memtool.ErrNotExist) {
		t.Fatalf("WriteFile = %v, want success or ErrNotExist", err)
	}
	late := content(t, mine, "old/late.txt")
	if _, serr := mine.Stat(ctx, "old"); late != "(missing)" && errors.Is(serr, memtool.ErrNotExist) {
		t.Errorf("old/late.txt holds %q (WriteFile: %v) in a directory that does not exist", late, err)
	}
	if moved := content(t, mine, "new/late.txt"); err == nil && late == "(missing)" && moved != "late" {
		t.Errorf("WriteFile succeeded, but the file is at neither name (new/late.txt: %q)", moved)
	}
	checkContents(t, mine, map[string]string{"new/a.txt": "a"})
}
