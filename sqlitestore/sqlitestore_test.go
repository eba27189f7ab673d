package sqlitestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/tenancy/tenancytest"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

func open(t *testing.T, path string) *sqlitestore.Store { return openWith(t, path, nil) }

func openWith(t *testing.T, path string, opts *sqlitestore.Options) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(path, opts)
	return storetest.Opened(t, s, err)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		return open(t, filepath.Join(t.TempDir(), "m.db"))
	})
}

func TestTenantSuite(t *testing.T) {
	storetest.RunTenants(t, func(t *testing.T) memtool.Store {
		return open(t, filepath.Join(t.TempDir(), "m.db"))
	})
}

// TestSharedFile checks that two handles on one file (as two processes
// have) see each other's writes.
func TestSharedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	a, b := open(t, path), open(t, path)
	if err := a.WriteFile(ctx, "x", []byte("from a"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile(ctx, "x", []byte("from b"), memtool.CreateOnly); !errors.Is(err, memtool.ErrExist) {
		t.Fatalf("second create through another handle: %v, want ErrExist", err)
	}
	got, err := b.ReadFile(ctx, "x", 100)
	if err != nil || string(got) != "from a" {
		t.Fatalf("read through another handle: %q, %v", got, err)
	}
}

// TestTenancy runs the tenancy checks RunTenants lacks (see tenancytest).
func TestTenancy(t *testing.T) {
	tenancytest.Check(t, func(t *testing.T) tenancytest.Opener {
		path := filepath.Join(t.TempDir(), "m.db")
		return func(t *testing.T) tenancytest.Store { return open(t, path) }
	})
}

// TestPrivateFiles checks that the database and its WAL files are created
// readable by their owner only.
func TestPrivateFiles(t *testing.T) {
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "m.db"))
	if err := s.WriteFile(context.Background(), "x", []byte("secret"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 2 {
		t.Fatalf("only %d files beside the database", len(entries))
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", e.Name(), fi.Mode())
		}
	}
}

// TestPathWithSpecialCharacters checks that the database is the file at
// the path given, also when the path holds characters a URI escapes.
func TestPathWithSpecialCharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?#%20x")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m db.sqlite")
	s := open(t, path)
	if err := s.WriteFile(context.Background(), "x", []byte("y"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m db.sqlite", "m db.sqlite-wal"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the database and its WAL are not at the path given: %v", err)
		}
	}
}
