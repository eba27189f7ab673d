package filestore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A store directory that another process made with its missing parents a
// moment ago (and has not yet fsynced into place, or was killed before it
// did) has every one of those parents as fresh as itself: a power loss
// takes away the highest of them that is not in its parent on disk, and
// the store with it. Open of such a directory fsyncs each of its
// ancestors, not only its parent, before its writes count.
func TestOpenFreshDirSyncsAncestors(t *testing.T) {
	var synced []string
	real := syncParent
	syncParent = func(dir string) error { synced = append(synced, dir); return real(dir) }
	t.Cleanup(func() { syncParent = real })

	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "store")
	if err := os.MkdirAll(dir, 0o700); err != nil { // the other process's mkdirs
		t.Fatal(err)
	}
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, want := range []string{filepath.Join(base, "a", "b"), filepath.Join(base, "a"), base} {
		if !slices.Contains(synced, want) {
			t.Errorf("Open of a fresh directory fsynced %q, not %s", synced, want)
		}
	}
}
