package keys_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memtool/memtool/internal/testclock"
	"github.com/memtool/memtool/keys"
)

// TestSQLiteFileCreatedPrivate: memtool keys add on an SQLite store that
// is not there yet creates its file (Options.Create). The file holds the
// keys' hashes and, once the store opens it, the memory: it must be
// private, as the store's own Open makes it (0600), whatever the umask
// leaves of SQLite's default 0644; and so must its WAL files.
func TestSQLiteFileCreatedPrivate(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o022))
	path := filepath.Join(t.TempDir(), "new", "m.db")
	k := open(t, "sqlite://"+path, testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	if _, _, err := k.Add(context.Background(), keys.NewKey{Tenant: "alice", Scope: keys.Write}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			if p != path && os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want no access for group or others", filepath.Base(p), fi.Mode().Perm())
		}
	}
}
