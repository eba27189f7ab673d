package filestore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
)

// A directory that another process made a moment ago, and has not yet
// fsynced into its parent (or failed to), looks to Open like any existing
// directory: durable.MkdirAll fsyncs nothing for it. A store opened there
// must fsync the parent itself before its writes count, or a power loss
// takes the directory away with the writes it reported done. Once a writer
// has made the lock file, some Open fsynced the parent first, and later
// Opens cost no fsync.
func TestOpenFreshDirSyncsParent(t *testing.T) {
	var synced []string
	real := syncParent
	syncParent = func(dir string) error { synced = append(synced, dir); return real(dir) }
	t.Cleanup(func() { syncParent = real })

	base := t.TempDir()
	dir := filepath.Join(base, "store")
	if err := os.Mkdir(dir, 0o700); err != nil { // the other process's mkdir
		t.Fatal(err)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(synced) == 0 || synced[0] != base {
		t.Errorf("Open of a fresh directory fsynced %q, want %s first", synced, base)
	}
	if err := s.WriteFile(context.Background(), "a.md", []byte("a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s.Close()

	synced = nil
	s, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(synced) > 0 {
		t.Errorf("Open of a store a writer used fsynced %q, want none", synced)
	}
}
