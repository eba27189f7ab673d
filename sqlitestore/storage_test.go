package sqlitestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/hostfault"
	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

// TestFullDisk fills a small file system: the write that does not fit
// fails with ErrNoSpace and changes nothing, every acknowledged file reads
// back whole, and once space is freed (here by removing another file) the
// store writes again. SQLite needs space to delete too (the change goes
// through its write-ahead log), so a Remove on the full disk may fail with
// ErrNoSpace as well; then it has changed nothing.
func TestFullDisk(t *testing.T) {
	dir := hostfault.Tmpfs(t, "size=2m,mode=0700")
	ctx := context.Background()
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 512<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.db")
	s := open(t, path)
	content := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 100<<10) }
	check := func(st *sqlitestore.Store, names []string) {
		t.Helper()
		for i, name := range names {
			got, err := st.ReadFile(ctx, name, 1<<20)
			if err != nil || !bytes.Equal(got, content(i)) {
				t.Errorf("acknowledged %s reads back %d bytes, %v", name, len(got), err)
			}
		}
	}
	var acked []string
	full := false
	for i := 0; i < 40 && !full; i++ {
		name := fmt.Sprintf("f%02d", i)
		switch err := s.WriteFile(ctx, name, content(i), memtool.CreateOnly); {
		case err == nil:
			acked = append(acked, name)
		case errors.Is(err, memtool.ErrNoSpace):
			full = true
			if _, err := s.Stat(ctx, name); !errors.Is(err, memtool.ErrNotExist) {
				t.Errorf("the write that found the disk full left %s behind (Stat: %v)", name, err)
			}
		default:
			t.Fatalf("write %s: %v, want nil or ErrNoSpace", name, err)
		}
	}
	if !full || len(acked) < 2 {
		t.Fatalf("%d files of 100 KiB written to a 2 MiB file system, full: %v", len(acked), full)
	}
	check(s, acked)
	err := s.Update(ctx, acked[0], 1<<20, func(old []byte) ([]byte, error) { return append(old, content(0)...), nil })
	if !errors.Is(err, memtool.ErrNoSpace) {
		t.Errorf("growing Update on a full disk: %v, want ErrNoSpace", err)
	}
	last := acked[len(acked)-1]
	switch err := s.Remove(ctx, last); {
	case err == nil:
		acked = acked[:len(acked)-1]
	case errors.Is(err, memtool.ErrNoSpace):
		t.Logf("Remove on the full disk: %v", err)
	default:
		t.Errorf("Remove on a full disk: %v, want nil or ErrNoSpace", err)
	}
	check(s, acked)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFile(ctx, "after", []byte("room again"), memtool.CreateOnly); err != nil {
		t.Errorf("a write once space was freed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(open(t, path), acked)
}

// readOnlyCases make the database file at path read-only, with its store
// closed, in the ways a deployment meets: a file the process may not
// write, and a read-only file system. Each may skip.
var readOnlyCases = []struct {
	name string
	make func(t *testing.T, path string) (roPath string)
}{
	{"file", func(t *testing.T, path string) string {
		if os.Geteuid() == 0 {
			// Permissions do not stop root; the immutable attribute does.
			if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
				hostfault.Unavailable(t, fmt.Sprintf("chattr +i: %v: %s", err, out))
			}
			t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
		} else if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		return path
	}},
	{"file system", readOnlyFS},
}

// readOnlyFS mounts the directory of path again, read-only, and returns
// the path there.
func readOnlyFS(t *testing.T, path string) string {
	ro := t.TempDir()
	hostfault.Mount(t, ro, "--bind", "-o", "ro", filepath.Dir(path))
	return filepath.Join(ro, filepath.Base(path))
}

// TestReadOnly opens a database file that cannot be written: the store
// opens, reads work, and every write fails with ErrReadOnly and changes
// nothing. SQLite reads a WAL database on a read-only file system only
// while its -wal and -shm files exist (here: another store has the file
// open); without them a read fails with ErrReadOnly too.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	for _, c := range readOnlyCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			s := open(t, path)
			storeops.Seed(t, s)
			if c.name == "file" {
				s.Close() // the file alone is read-only: SQLite makes its -wal and -shm anew
			}
			ro := c.make(t, path)
			// SQLite keeps the read-only path's descriptors open while
			// this process has the file open elsewhere: close s before
			// the file system is unmounted.
			t.Cleanup(func() { s.Close() })
			st := openAnswered(t, ro, nil, "of a read-only file")
			if got, err := st.ReadFile(ctx, "kept", 100); err != nil || string(got) != "kept" {
				t.Errorf("ReadFile of a read-only file = %q, %v", got, err)
			}
			if _, err := st.ReadDir(ctx, "tree"); err != nil {
				t.Errorf("ReadDir of a read-only file: %v", err)
			}
			for _, w := range writes {
				if err := w.Run(ctx, st); !errors.Is(err, memtool.ErrReadOnly) {
					t.Errorf("%s on a read-only file: %v, want ErrReadOnly", w.Name, err)
				}
				if w.Done(ctx, st) {
					t.Errorf("%s on a read-only file made its change", w.Name)
				}
			}
			if _, err := st.Tenant(ctx, "t1"); err == nil {
				t.Errorf("Tenant on a read-only single-tenant file succeeded")
			}
		})
	}
	for _, c := range []struct {
		name, where string
		make        func(t *testing.T, path string) (roPath string)
	}{
		{"file system without WAL files", "on a read-only file system", readOnlyFS},
		// The file may be written, but SQLite cannot create its -wal and
		// -shm beside it.
		{"read-only directory without WAL files", "in a read-only directory", func(t *testing.T, path string) string {
			readOnlyDir(t, filepath.Dir(path))
			return path
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			s := open(t, path)
			storeops.Seed(t, s)
			s.Close() // the last connection removes the -wal and -shm files
			st, err := sqlitestore.Open(c.make(t, path), nil)
			if err == nil {
				defer st.Close()
				_, err = st.ReadFile(ctx, "kept", 100)
			}
			if !errors.Is(err, memtool.ErrReadOnly) {
				t.Errorf("reading a closed WAL database %s: %v, want ErrReadOnly", c.where, err)
			}
		})
	}
	t.Run("missing file in a read-only directory", func(t *testing.T) {
		ro := t.TempDir()
		hostfault.Mount(t, ro, "--bind", "-o", "ro", t.TempDir())
		if _, err := sqlitestore.Open(filepath.Join(ro, "m.db"), nil); !errors.Is(err, memtool.ErrReadOnly) {
			t.Errorf("Open of a new file in a read-only directory: %v, want ErrReadOnly", err)
		}
	})
}

// readOnlyDir makes dir take no new files until the test ends: by its
// permissions, or (as root, whom they do not stop) its immutable attribute.
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		hostfault.Unavailable(t, fmt.Sprintf("chattr +i: %v: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}

// openAnswered opens the file at path with opts, failing t if Open fails
// or does not answer (see storetest.Answer); the store is closed when t
// ends. what says what holds or bars the file, for the failure message.
func openAnswered(t *testing.T, path string, opts *sqlitestore.Options, what string) *sqlitestore.Store {
	t.Helper()
	var s *sqlitestore.Store
	err := storetest.Answer(t, "Open", func() (err error) {
		s, err = sqlitestore.Open(path, opts)
		return err
	})
	if err != nil {
		err = fmt.Errorf("Open %s: %w", what, err)
	}
	return storetest.Opened(t, s, err)
}

// TestDeletedFile deletes the database file (alone, and with its -wal and
// -shm) under a store that has it open: a write the store acknowledges
// afterwards must be in the file at the path, where the next store to
// open it reads; a write that cannot be there fails.
func TestDeletedFile(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		suffixes []string
	}{
		{"file", []string{""}},
		{"file and WAL", []string{"", "-wal", "-shm"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			s := open(t, path)
			storeops.Seed(t, s)
			for _, suffix := range c.suffixes {
				if err := os.Remove(path + suffix); err != nil {
					t.Fatal(err)
				}
			}
			err := s.WriteFile(ctx, "after", []byte("x"), memtool.CreateOnly)
			if err != nil {
				return
			}
			if _, err := open(t, path).ReadFile(ctx, "after", 100); err != nil {
				t.Errorf("a write acknowledged after the database file was deleted is not in the file at its path: %v", err)
			}
		})
	}
}

// TestReplacedFile replaces the database file under a store that has it
// open with another database (a backup put back, say), its write-ahead
// log checkpointed first as SQLite does every 1000 pages: the store's
// reads see the file it opened, or fail; none sees the other file, which
// a connection the store opens afterwards would read, while the store's
// older connections read its own. Else one read sees the new content and
// the next the old.
func TestReplacedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path)
	if err := s.WriteFile(ctx, "f", []byte("old quokka"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, path)
	other := filepath.Join(t.TempDir(), "m.db")
	o := open(t, other)
	if err := o.WriteFile(ctx, "f", []byte("new quokka"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	o.Close()
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	read := func(how string) {
		t.Helper()
		if got, err := s.ReadFile(ctx, "f", 100); err == nil && string(got) != "old quokka" {
			t.Errorf("%s after the file was replaced: %q, the other file's", how, got)
		}
	}
	read("ReadFile")
	// The search holds its connection while it gives the file: a read
	// meanwhile takes a new connection.
	err := s.SearchFiles(ctx, "", memtool.IndexQuery{Terms: []string{"quokka"}, Limit: 100}, func(name string, data []byte) error {
		if string(data) != "old quokka" {
			t.Errorf("search after the file was replaced gave %s: %q", name, data)
		}
		read("ReadFile during a search")
		return nil
	})
	if err != nil {
		t.Logf("search after the file was replaced: %v", err)
	}
	read("ReadFile after a search")
}

// checkpoint copies the write-ahead log of the database file at path into
// the file, and empties the log.
func checkpoint(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, log, done int
	if err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil || busy != 0 {
		t.Fatalf("checkpoint: busy %d, %v", busy, err)
	}
}
