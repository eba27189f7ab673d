package sqlitestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

func open(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		return open(t, filepath.Join(t.TempDir(), "m.db"))
	})
}

func TestConformanceTenant(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memtool.Store {
		s := open(t, filepath.Join(t.TempDir(), "m.db"))
		// A neighbour with entries of the same names must stay invisible.
		other, err := s.Tenant(context.Background(), "neighbour")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := other.Mkdir(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := other.WriteFile(ctx, "a/b", []byte("x"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tenant(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		return ts
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

func TestTenancyIsExclusive(t *testing.T) {
	ctx := context.Background()
	single := open(t, filepath.Join(t.TempDir(), "single.db"))
	if _, err := single.Stat(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := single.Tenant(ctx, "t1"); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("Tenant on a single-tenant file: %v, want ErrTenancy", err)
	}

	path := filepath.Join(t.TempDir(), "multi.db")
	multi := open(t, path)
	if _, err := multi.Tenant(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	again := open(t, path)
	if _, err := again.ReadDir(ctx, ""); !errors.Is(err, memtool.ErrTenancy) {
		t.Errorf("tenant-less ReadDir on a multi-tenant file: %v, want ErrTenancy", err)
	}
	if _, err := again.Tenant(ctx, "../t1"); err == nil {
		t.Errorf("Tenant accepted an invalid id")
	}
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "m db.sqlite") || !slices.Contains(names, "m db.sqlite-wal") {
		t.Errorf("the directory holds %q, want the database and its WAL", names)
	}
}
