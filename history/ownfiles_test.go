package history_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	"github.com/memtool/memtool/history"
	"github.com/memtool/memtool/internal/backendtest"
	"github.com/memtool/memtool/storetest"
)

// TestOwnFilesKeepNoVersions: the files that stores and policies keep for
// themselves under names starting with ".memtool" (the path gate refuses
// them to the model, and Versions cannot name them) are no memory: the
// wrapper keeps no version of them. With package expiry over the wrapper,
// every recorded access rewrote the access index through it, and each
// rewrite kept the whole index as a version, counted against MaxBytes:
// the model's own versions, here the only copy of a deleted file, were
// dropped to make room for copies of the index nobody can read.
func TestOwnFilesKeepNoVersions(t *testing.T) {
	ctx := context.Background()
	inner := backendtest.FileStore(t)
	mem := memtool.New(expiry.New(history.New(inner, &history.Options{MaxBytes: 4 << 10}), nil), nil)
	storetest.Call(t, mem, map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "the only copy\n"})
	storetest.Call(t, mem, map[string]any{"command": "delete", "path": "/memories/a.md"})
	for i := range 60 {
		storetest.Call(t, mem, map[string]any{"command": "create", "path": fmt.Sprintf("/memories/notes-%03d.md", i), "file_text": "x\n"})
	}
	vs, err := history.Versions(ctx, inner, "/memories/a.md")
	if err != nil || len(vs) != 1 {
		t.Errorf("versions of the deleted a.md: %v, %v; want its one version", vs, err)
	}
	var kept []string
	err = memtool.Walk(ctx, inner, history.DirName, func(name string, fi memtool.FileInfo) error {
		if fi.IsRegular() && len(name) > 0 {
			kept = append(kept, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// a.md's path, counter and version, and the usage counter.
	if len(kept) > 4 {
		t.Errorf("history holds %d files, want 4 (a.md's path, counter and version, the usage counter): %v", len(kept), kept)
	}
}
