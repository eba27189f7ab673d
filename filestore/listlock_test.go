//go:build linux

package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A listing changed all the time is read at last holding the write lock,
// and read once more if an older memtool's lock file appeared meanwhile
// (see stable). If the directory has grown past ListDir's limit by then,
// the read under the lock hands fn every name: the read after it must
// not hand them over again. Here the directory is churned (a file read is
// removed, so every read has a vanished name) until stable takes the
// lock, then grown, and the lock file appears during the read under the
// lock, as an older memtool makes it.
func TestListDirHandsNamesOnceUnderTheLock(t *testing.T) {
	ctx := context.Background()
	dir, s := openTemp(t)
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, lockName)); err == nil {
		t.Fatal("a fresh store has a lock file; the test needs one without")
	}
	// 30 names of 40 bytes: every first read of the directory returns
	// more than the probe's 2*maxDirent bytes, which tells the two apart.
	want := map[string]bool{}
	for i := range 30 {
		n := fmt.Sprintf("keep-%02d-%s", i, strings.Repeat("k", 32))
		write(n)
		want[n] = true
	}
	probe, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	locked := func() bool {
		err := unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			unix.Flock(int(probe.Fd()), unix.LOCK_UN)
		}
		return err != nil
	}
	churn, grown, madeLock := 0, false, false
	readHook = func(n int) {
		switch {
		case locked():
			if grown && !madeLock {
				madeLock = true
				write(lockName)
			}
		case grown || n <= 2*maxDirent:
		default:
			// A first read: the vanishing file it read goes, another comes.
			os.Remove(filepath.Join(dir, fmt.Sprintf("vanish-%d", churn)))
			churn++
			write(fmt.Sprintf("vanish-%d", churn))
			if churn == 8 {
				grown = true
				for i := range 1000 {
					n := fmt.Sprintf("grown-%04d-%s", i, strings.Repeat("g", 30))
					write(n)
					want[n] = true
				}
			}
		}
	}
	defer func() { readHook = nil }()
	write("vanish-0")

	seen := map[string]int{}
	_, many, err := s.ListDir(ctx, "", 100, func(n string) bool { seen[n]++; return true })
	if err != nil || !many {
		t.Fatalf("ListDir = many %v, %v", many, err)
	}
	if !madeLock {
		t.Fatalf("the lock file did not appear under the lock (%d reads churned): the test tests nothing", churn)
	}
	for n := range want {
		if seen[n] != 1 {
			t.Errorf("ListDir gave %s %d times, want once", n, seen[n])
		}
	}
}
