package durable

import (
	"os"
	"path/filepath"
	"slices"
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
