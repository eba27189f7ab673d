package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// When the fsync of its directory fails, WriteNew fails and leaves no
// file, so that the next WriteNew writes it again and fsyncs it, rather
// than failing with fs.ErrExist on a file a crash may take away.
func TestWriteNewFailedDirectoryFsync(t *testing.T) {
	real := syncDir
	syncDir = func(string) error { return syscall.EIO }
	t.Cleanup(func() { syncDir = real })

	name := filepath.Join(t.TempDir(), "k")
	if err := WriteNew(name, []byte("one"), 0o600); !errors.Is(err, syscall.EIO) {
		t.Fatalf("WriteNew with the directory's fsync failing: %v, want EIO", err)
	}
	if _, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file after the failed WriteNew: %v, want it removed", err)
	}
	syncDir = real
	if err := WriteNew(name, []byte("two"), 0o600); err != nil {
		t.Fatalf("WriteNew again: %v", err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "two" {
		t.Errorf("the file holds %q, %v; want \"two\"", b, err)
	}
}
