package filestore_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memtool/memtool/filestore"
)

// A listing of a directory changed all the time is read holding the write
// lock, which keeps out a writer of an older memtool too, which flocks
// only the lock file. A reader makes no lock file; if one appears while
// it reads (an older writer made it, and may have changed the directory
// meanwhile), the reader reads again holding that file's flock. Before,
// the listing it returned was read with the older writer inside.
func TestStableListingExcludesOlderWriter(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	lockPath := filepath.Join(dir, ".memtool.lock")
	// olderWriterGetsIn reports whether a writer of an older memtool,
	// making the lock file and flocking it, would get in now.
	olderWriterGetsIn := func() bool {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
	}
	tries, lastIn := 0, false
	err := filestore.Stable(t.Context(), s, func() (bool, error) {
		tries++
		if tries <= 8 {
			return false, nil // changed all the time: the reader takes the lock
		}
		// The reader holds the lock now: an older writer comes in (or
		// is kept out) during this read.
		lastIn = olderWriterGetsIn()
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lastIn {
		t.Errorf("the listing returned was read while a writer of an older memtool held the lock file (%d tries)", tries)
	}
}
