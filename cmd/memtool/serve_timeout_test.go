package main

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// memtool serve's --timeout ends a resource API request whose store does
// not answer: a write waiting for a directory store's lock, held here by
// another process, is answered 504 at the timeout, not 503 ErrBusy at the
// store's busy timeout (5 s), let alone never.
func TestServeResourceTimeout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	token := addKey(t, dir, "alice", "write")
	p := startServe(t, plainBinary(t), dir, "--timeout", "300ms")
	put := func() (int, string) {
		return request(t, "PUT", p.url, "/v1/file?path=/memories/a.md", token, "one")
	}
	if status, answer := put(); status/100 != 2 {
		t.Fatalf("PUT: %d %s", status, answer)
	}
	// Hold the lock of every directory of the store, as a writer in
	// another process does its own.
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatalf("flock %s: %v", path, err)
		}
		return nil
	})
	if status, answer := put(); status != http.StatusGatewayTimeout || !strings.Contains(answer, "timeout") {
		t.Errorf("PUT while the store's lock is held: %d %s, want 504 at --timeout", status, answer)
	}
}
