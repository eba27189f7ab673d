package sqlitestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtool/memtool"
)

// linkedStore opens a store through a symbolic link, in a directory of
// its own, to m.db in another directory; it returns the store, its
// fsyncs (since the open), the link and the file linked to.
func linkedStore(t *testing.T) (s *Store, f *fsyncs, link, target string) {
	t.Helper()
	target = filepath.Join(t.TempDir(), "real", "m.db")
	if err := os.Mkdir(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(t.TempDir(), "m.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f = &fsyncs{holding: make(chan string, 16)}
	s, err := Open(link, &Options{fsync: f.fsync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, f, link, target
}

// SQLite keeps the WAL of a database opened through a symbolic link
// beside the file the link leads to: a write's fsync is of that WAL, and
// the first one syncs that file's directory, not the link's.
func TestSymlinkedPathSyncsTheWALBesideTheFile(t *testing.T) {
	ctx := context.Background()
	s, f, link, target := linkedStore(t)
	if _, err := os.Lstat(target + "-wal"); err != nil {
		t.Fatalf("the WAL is not beside the file linked to: %v", err)
	}
	if _, err := os.Lstat(link + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a WAL beside the link: %v", err)
	}
	if got := f.take(); len(got) < 2 || got[0] != "real" || got[1] != "m.db-wal" {
		t.Errorf("the schema's commit synced %q, want the directory of the file linked to, then the WAL", got)
	}
	for _, name := range []string{"first.md", "a.md"} {
		if err := s.WriteFile(ctx, name, []byte(name), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		if got := f.take(); !slices.Contains(got, "m.db-wal") {
			t.Errorf("the write of %s was acknowledged without an fsync of its WAL (synced %q)", name, got)
		}
	}
}

// A symbolic link made to lead to another file after the store opened
// does not move the store: its writes fail, as they would go to the file
// it has open, which no later store at the path reads; what it wrote
// before is in that file.
func TestSymlinkChangedAfterOpen(t *testing.T) {
	ctx := context.Background()
	s, _, link, target := linkedStore(t)
	if err := s.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	err := s.WriteFile(ctx, "b.md", []byte("beta"), memtool.CreateOnly)
	if err == nil || !strings.Contains(err.Error(), "open it again") {
		t.Errorf("a write once the link leads elsewhere: %v, want a failure", err)
	}
	old, err := Open(target, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if data, err := old.ReadFile(ctx, "a.md", 1<<20); string(data) != "alpha" {
		t.Errorf("the file first linked to holds %q, %v; want the acknowledged write", data, err)
	}
	if _, err := old.Stat(ctx, "b.md"); !errors.Is(err, memtool.ErrNotExist) {
		t.Errorf("the failed write: %v, want ErrNotExist", err)
	}
}

// A WAL file deleted while the store has it open (SQLite never removes
// it then) leaves a write's commit in a file that no fsync reaches: the
// write fails with memtool.ErrOutcomeUnknown, not acknowledged by an fsync
// of the database file.
func TestMissingWALFailsTheWrite(t *testing.T) {
	ctx := context.Background()
	s, f, path := openSynced(t)
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	f.take()
	if err := s.WriteFile(ctx, "a.md", []byte("alpha"), memtool.CreateOnly); !errors.Is(err, memtool.ErrOutcomeUnknown) {
		t.Errorf("a write without its WAL file: %v, want ErrOutcomeUnknown", err)
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("synced %q, want nothing", got)
	}
}
