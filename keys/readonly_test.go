package keys_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/memtool/memtool/keys"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// lookWithoutCreate opens the keyring of url without Create, as memtool
// keys list and revoke do, and lists it and revokes a key id it does not
// hold: a store without keys holds none, and the revoke finds nothing.
func lookWithoutCreate(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	ring, err := keys.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	if list, err := ring.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List: %v, %v; want no keys", list, err)
	}
	if err := ring.Revoke(ctx, "0123456789abcdef"); !errors.Is(err, keys.ErrNotFound) {
		t.Errorf("Revoke of an unknown id: %v; want ErrNotFound", err)
	}
}

// TestLookWritesNothing checks that a keyring opened without Create
// writes nothing to a store that has no keys: an empty SQLite file and
// another program's SQLite database (no table made, no switch to WAL, not
// a byte changed), a PostgreSQL schema (no memtool_keys table made), a
// directory store (no key file or lock file beside it). A mistyped
// --store given to memtool keys list or revoke leaves what it names as
// it was.
func TestLookWritesNothing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('theirs')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, path := range []string{empty, other} {
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lookWithoutCreate(t, "sqlite://"+path)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("%s: %d bytes before, %d after: the look changed the file", filepath.Base(path), len(before), len(after))
		}
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(path + suffix); err == nil {
				t.Errorf("%s%s was left beside it", filepath.Base(path), suffix)
			}
		}
	}

	store := filepath.Join(dir, "memories")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	lookWithoutCreate(t, store)
	if names, _ := filepath.Glob(store + ".keys*"); len(names) != 0 {
		t.Errorf("files made beside a directory store: %v", names)
	}

	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		lookWithoutCreate(t, url)
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var table *string
		if err := conn.QueryRow(context.Background(), `SELECT to_regclass('memtool_keys')::text`).Scan(&table); err != nil {
			t.Fatal(err)
		}
		if table != nil {
			t.Errorf("the look made the table %s", *table)
		}
	})
}
