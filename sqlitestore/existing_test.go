package sqlitestore_test

import (
	"bytes"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
)

// folder lists the names in dir.
func folder(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Open with Existing writes nothing to a file that is not a memtool
// database yet: a missing file is not made, and an empty file and another
// program's database (in its own journal mode) fail with ErrNoTables,
// matching fs.ErrNotExist, keeping their bytes, with nothing left beside
// them. Without Existing, the other program's database got memtool's
// tables and was turned to WAL by a mere read (memtool view). A memtool
// database opens and reads as always.
func TestExistingWritesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := sqlitestore.Open(missing, &sqlitestore.Options{Existing: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open with Existing of a missing file = %v, want fs.ErrNotExist", err)
	}
	if names := folder(t, dir); len(names) > 0 {
		t.Fatalf("Open with Existing of a missing file left %q", names)
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('not a memory')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, path := range []string{empty, other} {
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		names := folder(t, dir)
		_, err = sqlitestore.Open(path, &sqlitestore.Options{Existing: true})
		if !errors.Is(err, sqlitestore.ErrNoTables) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open with Existing of %s = %v, want ErrNoTables, matching fs.ErrNotExist", filepath.Base(path), err)
		}
		if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
			t.Errorf("Open with Existing changed %s (%v)", filepath.Base(path), err)
		}
		if after := folder(t, dir); !slices.Equal(after, names) {
			t.Errorf("Open with Existing of %s left %q, was %q", filepath.Base(path), after, names)
		}
	}

	// A file that memtool keys add made before the store's first use
	// holds only the keys' table: it is memtool's, and opens.
	keysOnly := filepath.Join(dir, "keys.db")
	db, err = sql.Open("sqlite", "file:"+keysOnly)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE memtool_keys (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := openWith(t, keysOnly, &sqlitestore.Options{Existing: true}).ReadDir(t.Context(), ""); err != nil {
		t.Errorf("a file of memtool's keys alone, opened with Existing: %v", err)
	}

	store := filepath.Join(dir, "memory.db")
	s := open(t, store)
	if err := s.WriteFile(t.Context(), "a.md", []byte("tea"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	r := openWith(t, store, &sqlitestore.Options{Existing: true})
	if data, err := r.ReadFile(t.Context(), "a.md", 100); err != nil || string(data) != "tea" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	r.Close()
	if after, err := os.ReadFile(store); err != nil || !bytes.Equal(after, before) {
		t.Errorf("Open with Existing and a read changed the memory's file (%v)", err)
	}
}

// Another program's database in WAL mode, closed (no -wal or -shm beside
// it): Open with Existing reads it without leaving the -wal and -shm
// files SQLite makes to read a WAL database, as it says ("nothing was
// written"). It left both before.
func TestExistingLeavesWALDatabase(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA journal_mode=WAL; CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('not a memory')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	names := folder(t, dir)
	_, err = sqlitestore.Open(other, &sqlitestore.Options{Existing: true})
	if !errors.Is(err, sqlitestore.ErrNoTables) {
		t.Errorf("Open with Existing of another program's WAL database = %v, want ErrNoTables", err)
	}
	if after, err := os.ReadFile(other); err != nil || !bytes.Equal(after, before) {
		t.Errorf("Open with Existing changed the database (%v)", err)
	}
	if after := folder(t, dir); !slices.Equal(after, names) {
		t.Errorf("Open with Existing left %q, was %q", after, names)
	}

	// A memtool store closed in WAL mode still opens with Existing, and
	// one whose tables are still only in its -wal (its writer running,
	// not yet checkpointed) too.
	store := filepath.Join(dir, "memory.db")
	s := open(t, store)
	if err := s.WriteFile(t.Context(), "a.md", []byte("tea"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	r := openWith(t, store, &sqlitestore.Options{Existing: true})
	if data, err := r.ReadFile(t.Context(), "a.md", 100); err != nil || string(data) != "tea" {
		t.Errorf("ReadFile with the writer open = %q, %v", data, err)
	}
	r.Close()
	s.Close()
	r = openWith(t, store, &sqlitestore.Options{Existing: true})
	if data, err := r.ReadFile(t.Context(), "a.md", 100); err != nil || string(data) != "tea" {
		t.Errorf("ReadFile after the writer closed = %q, %v", data, err)
	}
}
