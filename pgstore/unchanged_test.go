package pgstore_test

import (
	"context"
	"testing"

	"github.com/memtool/memtool/internal/storeops"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestUnchangedUpdate: an Update whose fn returns the old content does not
// update the file's row (its xmin, the transaction that wrote it, stays).
func TestUnchangedUpdate(t *testing.T) {
	url := pgtest.URL(t)
	conn := connect(t, url)
	storeops.CheckUnchangedUpdate(t, open(t, url), "f", func() any {
		var xmin string
		if err := conn.QueryRow(context.Background(), `SELECT xmin::text FROM memtool_entries WHERE tenant = '' AND parent = '' AND name = 'f'`).Scan(&xmin); err != nil {
			t.Fatal(err)
		}
		return xmin
	})
}
