package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// MkdirAll makes every missing directory and fsyncs the parent of each,
// from the top down; an existing directory is left as it is, with no
// fsync.
func TestMkdirAllSyncsWhatItMade(t *testing.T) {
	var synced []string
	real := syncDir
	syncDir = func(dir string) error { synced = append(synced, dir); return real(dir) }
	t.Cleanup(func() { syncDir = real })

	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "c")
	if err := MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("Stat(%s) = %v, %v", dir, fi, err)
	}
	want := []string{base, filepath.Join(base, "a"), filepath.Join(base, "a", "b")}
	if !slices.Equal(synced, want) {
		t.Errorf("fsynced %q, want %q", synced, want)
	}

	synced = nil
	if err := MkdirAll(dir, 0o700); err != nil || len(synced) > 0 {
		t.Errorf("MkdirAll of an existing directory: %v, fsynced %q", err, synced)
	}
	file := filepath.Join(base, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(filepath.Join(file, "x"), 0o700); err == nil {
		t.Error("MkdirAll below a file succeeded")
	}
}

// When an fsync fails, MkdirAll fails and leaves none of the directories
// it made, so that the next call makes them again and fsyncs them, rather
// than finding them there and taking them for durable ones.
func TestMkdirAllFailedFsyncIsMadeAgain(t *testing.T) {
	var synced []string
	fail := true
	real := syncDir
	syncDir = func(dir string) error {
		synced = append(synced, dir)
		if fail && len(synced) == 2 {
			return syscall.EIO
		}
		return real(dir)
	}
	t.Cleanup(func() { syncDir = real })

	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	if err := MkdirAll(dir, 0o700); !errors.Is(err, syscall.EIO) {
		t.Fatalf("MkdirAll with a failing fsync: %v, want EIO", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a after the failed MkdirAll: %v, want it removed", err)
	}
	fail, synced = false, nil
	if err := MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if want := []string{base, filepath.Join(base, "a")}; !slices.Equal(synced, want) {
		t.Errorf("the next MkdirAll fsynced %q, want %q", synced, want)
	}
}
