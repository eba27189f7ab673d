package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
)

// TestUnchangedUpdate: an Update whose fn returns the old content commits
// no change to the file (PRAGMA data_version, read on a connection of the
// test's own, moves only when another connection commits a change); one
// that changes it does.
func TestUnchangedUpdate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path)
	if err := s.WriteFile(ctx, "f", []byte("text"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	version := func() int64 {
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := version()
	if err := s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if version() != before {
		t.Errorf("an Update to the same content committed a change")
	}
	if err := s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return append(old, '!'), nil }); err != nil {
		t.Fatal(err)
	}
	if version() == before {
		t.Errorf("an Update to new content committed no change")
	}
}
