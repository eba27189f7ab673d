//go:build linux

package filestore_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/must"
)

// A RemoveAll that has renamed its directory away when the store is
// closed (a server shutting down while a delete runs) cannot delete the
// rest: the directory is gone for every reader, so RemoveAll says so, but
// what it held must not stay on disk for good. The lock file keeps the
// writer's mark, and the next Open sweeps it.
func TestCloseDuringRemoveAllLeavesNothingForGood(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.Open(dir, nil)
	must.Succeed(t, err)
	ctx := t.Context()
	must.Succeed(t, s.Mkdir(ctx, "d"))
	must.Succeed(t, s.WriteFile(ctx, "d/secret.md", []byte("deleted, so gone"), memtool.CreateOnly))
	var once sync.Once
	filestore.SetHooks(s, filestore.Hooks{DirSync: func() {
		once.Do(func() { must.Succeed(t, s.Close()) })
	}})
	err = s.RemoveAll(ctx, "d")
	t.Logf("RemoveAll with the store closed under it: %v", err)
	if _, lerr := os.Lstat(filepath.Join(dir, "d")); err == nil && !os.IsNotExist(lerr) {
		t.Fatalf("RemoveAll succeeded and d is still there: %v", lerr)
	}

	open(t, dir, nil)
	if got := debrisIn(t, dir); len(got) > 0 {
		t.Errorf("the next Open left the deleted directory's rest on disk: %q", got)
	}
}
