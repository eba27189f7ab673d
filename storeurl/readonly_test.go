package storeurl_test

import (
	"bytes"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storeurl"
)

// An empty file is not a memtool database yet: an Open that may not
// create (a read: memtool view) refuses it as it refuses a missing file,
// saying so, and leaves it empty, with nothing beside it (SQLite once
// wrote its schema into it). IsEmpty answers yes without writing, and an
// Open that may create makes it a store.
func TestReadOpenLeavesEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	url := "sqlite://" + path
	unchanged := func(after string) {
		t.Helper()
		if data, err := os.ReadFile(path); err != nil || len(data) != 0 {
			t.Fatalf("after %s the file holds %d bytes (%v)", after, len(data), err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"empty.db"}) {
			t.Fatalf("after %s the folder holds %q", after, names)
		}
	}
	for _, tenant := range []string{"", "alice"} {
		_, _, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: tenant})
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "empty") {
			t.Errorf("Open (tenant %q) of an empty file = %v, want an error that says it is empty, wrapping fs.ErrNotExist", tenant, err)
		}
		unchanged("Open")
	}
	if _, err := storeurl.Tenants(t.Context(), url); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Tenants of an empty file = %v, want fs.ErrNotExist", err)
	}
	unchanged("Tenants")
	if empty, err := storeurl.IsEmpty(t.Context(), url, ""); !empty || err != nil {
		t.Errorf("IsEmpty of an empty file = %v, %v", empty, err)
	}
	unchanged("IsEmpty")
	s, closer, err := storeurl.Open(t.Context(), url, &storeurl.Options{Create: true})
	if err != nil {
		t.Fatalf("Open with Create of an empty file: %v", err)
	}
	defer closer.Close()
	if _, err := s.ReadDir(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
}

// A read of a PostgreSQL schema without memtool's tables creates none:
// Open without Create fails as for a missing local store, Tenants too,
// and IsEmpty answers yes; the schema stays without tables, so a role
// that may only read gets a clear answer and one that may create is not
// given a store it did not ask for. Open with Create makes them.
func TestReadOpenCreatesNoTables(t *testing.T) {
	if os.Getenv(pgtest.EnvVar) == "" {
		pgtest.Unavailable(t, "$"+pgtest.EnvVar+" is not set")
	}
	url := pgtest.URL(t)
	tables := func(after string) {
		t.Helper()
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(t.Context())
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("after %s the schema holds %d tables", after, n)
		}
	}
	for _, tenant := range []string{"", "alice"} {
		_, _, err := storeurl.Open(t.Context(), url, &storeurl.Options{Tenant: tenant})
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open (tenant %q) of a schema without tables = %v, want fs.ErrNotExist", tenant, err)
		}
		tables("Open")
	}
	if _, err := storeurl.Tenants(t.Context(), url); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Tenants of a schema without tables = %v, want fs.ErrNotExist", err)
	}
	tables("Tenants")
	if empty, err := storeurl.IsEmpty(t.Context(), url, ""); !empty || err != nil {
		t.Errorf("IsEmpty of a schema without tables = %v, %v", empty, err)
	}
	tables("IsEmpty")
	_, closer, err := storeurl.Open(t.Context(), url, &storeurl.Options{Create: true})
	if err != nil {
		t.Fatalf("Open with Create: %v", err)
	}
	closer.Close()
}

// A read of another program's SQLite database leaves it as it was: Open
// without Create fails as for a missing store (it once added memtool's
// tables and turned the file to WAL), and so does Tenants.
func TestReadOpenLeavesOtherDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('not a memory')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	url := "sqlite://" + path
	if _, _, err := storeurl.Open(t.Context(), url, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of another program's database = %v, want fs.ErrNotExist", err)
	}
	if _, err := storeurl.Tenants(t.Context(), url); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Tenants of another program's database = %v, want fs.ErrNotExist", err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Errorf("a read changed another program's database (%v)", err)
	}
}
