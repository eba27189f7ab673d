package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool/internal/storeops"
)

// TestUnchangedUpdate: an Update whose fn returns the old content commits
// no change to the file (PRAGMA data_version, read on a connection of the
// test's own, moves only when another connection commits a change).
func TestUnchangedUpdate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path)
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
	storeops.CheckUnchangedUpdate(t, s, "f", func() any {
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	})
}
