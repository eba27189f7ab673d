package keys_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestAddExpiryNotInFuture: an expiry that is not after the key's
// creation, as the keyring keeps both (to the millisecond), is refused:
// Add never makes a key that is expired at birth.
func TestAddExpiryNotInFuture(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ now, expires time.Duration }{
		{0, 500 * time.Microsecond},                      // in the future by half a millisecond
		{800 * time.Microsecond, 500 * time.Microsecond}, // in the past
	} {
		c := testclock.New(t0.Add(tc.now))
		k := open(t, filepath.Join(t.TempDir(), "memories"), c)
		key, token, err := k.Add(ctx, keys.NewKey{Tenant: "alice", Scope: keys.Read, Expires: t0.Add(tc.expires)})
		if err == nil {
			_, verr := k.Verify(ctx, token)
			t.Errorf("now %v, expiry %v: Add made key %+v (Verify at once: %v); want an error", tc.now, tc.expires, key, verr)
		} else if !strings.Contains(err.Error(), "not in the future") {
			t.Errorf("now %v, expiry %v: %v", tc.now, tc.expires, err)
		}
	}
}
