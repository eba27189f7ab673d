package history_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/history"
)

// TestS3DirectoryDeleteInPartSaysSo: a delete of a directory through the
// wrapper over an S3 store, whose rename moves object by object, where
// the service refuses to delete one file (403 AccessDenied). The rename
// into the trash moves the other file and leaves that one where it was:
// the model must not be told the directory was deleted. The file that
// moved is kept as a version, the one that stayed is as it was, and the
// trash holds nothing.
func TestS3DirectoryDeleteInPartSaysSo(t *testing.T) {
	ctx := context.Background()
	inner, deny := deleteDeniedS3(t, "/f/d/b.txt")
	m := memtool.New(history.New(inner, nil), nil)
	for _, p := range []string{"/memories/d/a.txt", "/memories/d/b.txt"} {
		if res := m.Execute(ctx, &memtool.Create{Path: p, FileText: "text of " + p}); res.IsError {
			t.Fatal(res.Text)
		}
	}
	deny.Store(true)
	res := m.Execute(ctx, &memtool.Delete{Path: "/memories/d"})
	deny.Store(false)
	if got, err := inner.ReadFile(ctx, "d/b.txt", 1<<20); err != nil || string(got) != "text of /memories/d/b.txt" {
		t.Fatalf("d/b.txt, whose delete the service refused, holds %q, %v", got, err)
	}
	if !res.IsError || !strings.Contains(res.Text, "only in part") || strings.Contains(res.Text, ".memtool") {
		t.Errorf("d/b.txt is still there; the model is told %q, not that the delete was done only in part, in its own paths", res.Text)
	}
	if _, err := inner.Stat(ctx, "d/a.txt"); err == nil {
		// The rename may have left it too; then it must be as it was.
		if got, _ := inner.ReadFile(ctx, "d/a.txt", 1<<20); string(got) != "text of /memories/d/a.txt" {
			t.Errorf("d/a.txt holds %q", got)
		}
	} else if vs, err := history.Versions(ctx, inner, "/memories/d/a.txt"); err != nil || len(vs) == 0 {
		t.Errorf("d/a.txt is gone and no version of it is kept: %v, %v", vs, err)
	}
	if left, _ := inner.ReadDir(ctx, history.DirName+"/trash"); len(left) != 0 {
		t.Errorf("left in the trash: %v", left)
	}
}
