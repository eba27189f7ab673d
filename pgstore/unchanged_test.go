package pgstore_test

import (
	"context"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestUnchangedUpdate: an Update whose fn returns the old content does not
// update the file's row (its xmin, the transaction that wrote it, stays);
// one that changes it does.
func TestUnchangedUpdate(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	if err := s.WriteFile(ctx, "f", []byte("text"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	xmin := func() string {
		var x string
		if err := conn.QueryRow(ctx, `SELECT xmin::text FROM memtool_entries WHERE tenant = '' AND parent = '' AND name = 'f'`).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	before := xmin()
	if err := s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if xmin() != before {
		t.Errorf("an Update to the same content updated the row")
	}
	if err := s.Update(ctx, "f", 100, func(old []byte) ([]byte, error) { return append(old, '!'), nil }); err != nil {
		t.Fatal(err)
	}
	if xmin() == before {
		t.Errorf("an Update to new content did not update the row")
	}
}
