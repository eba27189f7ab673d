package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// A database whose tables a newer memtool brought to a version this one
// does not know is refused, with both versions named, and left as it is:
// never read as empty nor migrated back.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := openWith(t, url, short)
	if err := s.WriteFile(ctx, "kept.md", []byte("kept"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	var version int
	conn := connect(t, url)
	if err := conn.QueryRow(ctx, `SELECT max(version) FROM memtool_schema_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO memtool_schema_version (version) VALUES ($1)`, version+1); err != nil {
		t.Fatal(err)
	}
	_, err := pgstore.Open(ctx, url, &short)
	if err == nil || !strings.Contains(err.Error(), "newer than this memtool knows") {
		t.Fatalf("Open of a database a newer memtool migrated: %v, want it refused as newer", err)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM memtool_schema_version WHERE version = $1`, version+1).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("the newer version's row: %d, %v; want it left as it was", rows, err)
	}
}
