package filestore_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/storetest"
)

// On an overlayfs, where a directory of the lower layer (a container's
// image) does not rename (EXDEV), RemoveAll still removes such a
// directory with all it holds, leaving no trash behind, and the model's
// delete of it succeeds; what is beside it stays.
func TestRemoveAllOnOverlayLowerLayer(t *testing.T) {
	ctx := t.Context()
	lower := t.TempDir()
	for name, data := range map[string]string{
		"mem/sub/deep/a.md":  "a",
		"mem/sub/b.md":       "b",
		"mem/other/c.md":     "c",
		"mem/keep.md":        "keep",
		"mem/other/keep2.md": "keep too",
	} {
		writeHostFile(t, filepath.Join(lower, name), data)
	}
	merged := hostfault.Overlay(t, lower)
	dir := filepath.Join(merged, "mem")
	s := open(t, dir, nil)

	if err := s.RemoveAll(ctx, "sub"); err != nil {
		t.Fatalf("RemoveAll(sub) of the lower layer: %v", err)
	}
	_, err := s.Stat(ctx, "sub")
	storetest.WantErr(t, "Stat(sub) after RemoveAll", err, memtool.ErrNotExist)

	mem := memtool.New(s, nil)
	r := mem.Run(ctx, []byte(`{"command":"delete","path":"/memories/other/c.md"}`))
	if r.IsError {
		t.Errorf("delete of a lower file: %q", r.Text)
	}
	r = mem.Run(ctx, []byte(`{"command":"delete","path":"/memories/other"}`))
	if r.IsError {
		t.Errorf("delete of a lower directory: %q", r.Text)
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if got := strings.Join(left, " "); got != "keep.md" && got != ".memtool.lock keep.md" {
		t.Errorf("left in the store's directory: %q, want keep.md (and the lock file)", got)
	}
	if got := hostContent(t, filepath.Join(dir, "keep.md")); got != "keep" {
		t.Errorf("keep.md = %q", got)
	}
}

// On an overlayfs, a directory of the lower layer that does not rename
// (EXDEV) makes Rename answer errors.ErrUnsupported, having changed
// nothing, so that the model's rename of it is made by copying, and
// succeeds.
func TestRenameOnOverlayLowerLayer(t *testing.T) {
	ctx := t.Context()
	lower := t.TempDir()
	writeHostFile(t, filepath.Join(lower, "mem/sub/deep/a.md"), "a")
	writeHostFile(t, filepath.Join(lower, "mem/b.md"), "b")
	s := open(t, filepath.Join(hostfault.Overlay(t, lower), "mem"), nil)

	err := s.Rename(ctx, "sub", "moved")
	storetest.WantErr(t, "Rename(sub, moved) of the lower layer", err, errors.ErrUnsupported)
	if data, err := s.ReadFile(ctx, "sub/deep/a.md", 10); err != nil || string(data) != "a" {
		t.Errorf("sub/deep/a.md after the refused Rename = %q, %v", data, err)
	}

	mem := memtool.New(s, nil)
	r := mem.Run(ctx, []byte(`{"command":"rename","old_path":"/memories/sub","new_path":"/memories/moved"}`))
	if r.IsError {
		t.Fatalf("rename of a lower directory: %q", r.Text)
	}
	if data, err := s.ReadFile(ctx, "moved/deep/a.md", 10); err != nil || string(data) != "a" {
		t.Errorf("moved/deep/a.md = %q, %v", data, err)
	}
	_, err = s.Stat(ctx, "sub")
	storetest.WantErr(t, "Stat(sub) after the rename", err, memtool.ErrNotExist)
}
