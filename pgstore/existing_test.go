package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// schemaTables lists the tables of the URL's schema (its search_path),
// each with its number of rows and a digest of their text.
func schemaTables(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, url)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		var count int64
		var sum string
		if err := conn.QueryRow(ctx, `SELECT count(*), coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM "`+n+`" x`).Scan(&count, &sum); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: %d rows, md5 %s", n, count, sum))
	}
	return out
}

// Open with Existing creates nothing: a schema without memtool's tables
// (a read pointed at a new database, perhaps by a role that may only
// read) fails with an error wrapping fs.ErrNotExist and ErrNoTables, and
// the schema stays without tables; a schema that has them opens and reads
// as always.
func TestExistingCreatesNothing(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	_, err := pgstore.Open(ctx, url, &pgstore.Options{Existing: true})
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, pgstore.ErrNoTables) {
		t.Errorf("Open with Existing of an empty schema = %v, want ErrNoTables, matching fs.ErrNotExist", err)
	}
	if got := schemaTables(t, url); len(got) > 0 {
		t.Fatalf("Open with Existing made tables: %q", got)
	}
	// A schema that memtool keys add made before the store's first use
	// holds only the keys' table: it is memtool's, and opens.
	keysOnly := pgtest.URL(t)
	if _, err := connect(t, keysOnly).Exec(ctx, `CREATE TABLE memtool_keys (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	k, err := pgstore.Open(ctx, keysOnly, &pgstore.Options{Existing: true})
	if err != nil {
		t.Errorf("a schema of memtool's keys alone, opened with Existing: %v", err)
	} else {
		k.Close()
	}
	s := open(t, url)
	if err := s.WriteFile(ctx, "a.md", []byte("tea"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	before := schemaTables(t, url)
	r, err := pgstore.Open(ctx, url, &pgstore.Options{Existing: true})
	if err != nil {
		t.Fatalf("Open with Existing of a store: %v", err)
	}
	defer r.Close()
	if data, err := r.ReadFile(ctx, "a.md", 100); err != nil || string(data) != "tea" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if after := schemaTables(t, url); !slices.Equal(after, before) {
		t.Errorf("Open with Existing and a read changed the schema: %q, was %q", after, before)
	}
}
