package durable

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Replace fsyncs the directory once the new file has its name, so that
// the rename survives a power loss, and fails if that fsync fails.
func TestReplaceSyncsDirectoryAfterRename(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "k")
	var synced []string
	real := syncDir
	syncDir = func(d string) error {
		b, err := os.ReadFile(name)
		synced = append(synced, d+" "+string(b))
		if err != nil {
			return err
		}
		return real(d)
	}
	t.Cleanup(func() { syncDir = real })

	if err := Replace(name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if want := dir + " new"; len(synced) != 1 || synced[0] != want {
		t.Errorf("fsyncs (directory, then what the name held): %q, want [%q]", synced, want)
	}
	syncDir = func(string) error { return syscall.EIO }
	if err := Replace(name, []byte("newer")); !errors.Is(err, syscall.EIO) {
		t.Errorf("Replace with the directory's fsync failing: %v, want EIO", err)
	}
}
