//go:build linux

package hostfault_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool/internal/hostfault"
)

// TestPowerLossKeepsOnlyWhatWasSynced shows that Crash loses what a real
// power loss may: a file written without an fsync, a rename whose
// directory was not fsynced, a name whose file was fsynced but whose
// directory was not, while a file and its directory fsynced are kept.
func TestPowerLossKeepsOnlyWhatWasSynced(t *testing.T) {
	p := hostfault.NewPowerLoss(t, 32<<20)
	dir := filepath.Join(p.Dir, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	syncPath(t, p.Dir)
	write(t, filepath.Join(dir, "synced"), "kept", true)
	write(t, filepath.Join(dir, "old"), "renamed", true)
	syncPath(t, dir)
	write(t, filepath.Join(dir, "unsynced"), "lost", false)
	if err := os.Rename(filepath.Join(dir, "old"), filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	p.Crash()
	for name, want := range map[string]string{"synced": "kept", "old": "renamed", "new": "", "unsynced": ""} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if string(data) != want {
			t.Errorf("after the crash %s holds %q (%v), want %q", name, data, err, want)
		}
	}
	// The copy is a file system like the first: it keeps what is synced.
	write(t, filepath.Join(dir, "after"), "again", true)
	syncPath(t, dir)
	p.Crash()
	if data, err := os.ReadFile(filepath.Join(dir, "after")); string(data) != "again" {
		t.Errorf("after the second crash: %q, %v", data, err)
	}
}

func write(t *testing.T, name, content string, sync bool) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func syncPath(t *testing.T, name string) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
