//go:build linux

package filestore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/must"
	"github.com/memtool/memtool/storetest"
)

// On a full ext4 (not copy-on-write), a rename can still need space: the
// new name goes into the directory before the old one leaves it, and a
// directory block with no room for it takes a new block. A directory's
// removal renames it to a longer trash name first, so where its parent's
// block is full it fails with ErrNoSpace and changes nothing (it never
// removes half a tree); a file's removal needs no space and works; with
// space freed the directory goes.
func TestFullExt4DirectoryBlock(t *testing.T) {
	// 1 KiB blocks, no reserve for root, linear directories: the store's
	// directory is one block, laid out as computed below.
	mnt := hostfault.Ext4(t, 8<<20, "-b", "1024", "-m", "0", "-O", "^dir_index")
	dir := filepath.Join(mnt, "store")
	s := open(t, dir, nil)
	ctx := t.Context()
	must.Succeed(t, s.Mkdir(ctx, "victim"))
	must.Succeed(t, s.WriteFile(ctx, "victim/f.md", []byte("kept"), memtool.CreateOnly))
	// The block: "." 12, ".." 12, ".memtool.lock" 24, "victim" 16 bytes,
	// then 33 names of 28 bytes, before the 12 bytes of the block's checksum:
	// 24 bytes left, less than the 48 of a trash name.
	for i := range 33 {
		must.Succeed(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("n_%016d", i)), nil, 0o600))
	}
	if fi, err := os.Stat(dir); err != nil || fi.Size() != 1024 {
		t.Fatalf("the store's directory is not one block: %v, %v", fi, err)
	}
	fill := fillExt4(t, mnt)

	err := s.RemoveAll(ctx, "victim")
	t.Logf("RemoveAll(victim) on a full disk: %v", err)
	if err != nil {
		storetest.WantErr(t, "RemoveAll(victim) on a full disk", err, memtool.ErrNoSpace)
		if got := hostContent(t, filepath.Join(dir, "victim", "f.md")); got != "kept" {
			t.Errorf("a failed RemoveAll left victim/f.md = %q", got)
		}
	} else if _, err := os.Lstat(filepath.Join(dir, "victim")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveAll(victim) succeeded and victim is there: %v", err)
	}
	if got := debrisIn(t, dir); len(got) > 0 {
		t.Errorf("debris: %q", got)
	}
	if err := s.Remove(ctx, "n_0000000000000000"); err != nil {
		t.Errorf("Remove of a file on a full disk: %v", err)
	}

	must.Succeed(t, os.Remove(fill))
	if err := s.RemoveAll(ctx, "victim"); err != nil {
		t.Errorf("RemoveAll(victim) with space: %v", err)
	}
	if got := debrisIn(t, dir); len(got) > 0 {
		t.Errorf("debris: %q", got)
	}
}

// fillExt4 fills the ext4 at mnt to its last block and returns the file
// that fills it: ext4 holds back blocks for writes not yet on disk, so it
// writes smaller and smaller pieces, syncing, until one byte more fails.
func fillExt4(t *testing.T, mnt string) string {
	t.Helper()
	name := filepath.Join(mnt, "fill")
	f, err := os.Create(name)
	must.Succeed(t, err)
	defer f.Close()
	for _, chunk := range []int{1 << 20, 64 << 10, 1 << 10, 1} {
		for range 3 {
			for {
				if _, err := f.Write(make([]byte, chunk)); err != nil {
					break
				}
			}
			f.Sync()
		}
	}
	probe := filepath.Join(mnt, "probe")
	if err := os.WriteFile(probe, []byte("x"), 0o600); err == nil {
		t.Fatal("the disk is not full: one byte more fits")
	}
	os.Remove(probe)
	return name
}
