package filestore_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/internal/treesnap"
)

// hostSnapshot is everything about the tree at dir that a write could
// change: each entry's path, mode and bytes (a link's target), and the
// modification time of every directory, dir included, which a file made
// and removed again would move.
func hostSnapshot(t *testing.T, dir string) []string {
	t.Helper()
	out, err := treesnap.Take(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Opening a store and reading it writes nothing to its directory: no lock
// file, no mark in one, no tenants' directory, not even a file made and
// removed again (the directories' times would show it). A read-only
// command (memtool view) pointed at a directory leaves it as it was.
func TestReadsWriteNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		fill   func(t *testing.T, dir string)
		tenant string
	}{
		{"empty", func(*testing.T, string) {}, ""},
		{"files made by hand", func(t *testing.T, dir string) {
			writeHostFile(t, filepath.Join(dir, "a.md"), "tea")
			writeHostFile(t, filepath.Join(dir, "d", "b.md"), "milk")
		}, ""},
		{"written by a store", func(t *testing.T, dir string) {
			s := open(t, dir, nil)
			if err := s.WriteFile(t.Context(), "a.md", []byte("tea"), memtool.CreateOnly); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}, ""},
		{"empty lock file", func(t *testing.T, dir string) {
			writeHostFile(t, filepath.Join(dir, ".memtool.lock"), "")
			writeHostFile(t, filepath.Join(dir, "a.md"), "tea")
		}, ""},
		{"tenant made by hand", func(t *testing.T, dir string) {
			writeHostFile(t, filepath.Join(dir, filestore.TenantsDir, "alice", "a.md"), "tea")
		}, "alice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.fill(t, dir)
			before := hostSnapshot(t, dir)
			s, err := filestore.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			var m memtool.Store = s
			if _, err := s.Tenants(ctx); err != nil && c.tenant != "" {
				t.Fatal(err)
			}
			if c.tenant != "" {
				if m, err = s.Tenant(ctx, c.tenant); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := m.Stat(ctx, ""); err != nil {
				t.Fatal(err)
			}
			entries, err := m.ReadDir(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !e.IsDir() {
					if _, err := m.ReadFile(ctx, e.Name, 1<<20); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if after := hostSnapshot(t, dir); !slices.Equal(after, before) {
				t.Errorf("opening and reading the store changed its directory:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}
