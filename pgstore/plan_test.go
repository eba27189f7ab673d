package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/memtool/memtool/pgstore/pgtest"
)

// TestPlans checks that looking up an entry, listing a directory and
// selecting a subtree are each a range of the primary key, with both the
// tenant and the parent in the index condition, so that they cost what
// they return and not the size of the table; and that a search looks up
// the trigram index. The planner is told to avoid
// sequential scans, as it would on a table of realistic size.
func TestPlans(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s, err := Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO memtool_entries (tenant, parent, name, dir, size)
		SELECT 't' || (i % 50), 'd' || (i % 100), 'f' || i, false, 1 FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE memtool_entries`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for _, q := range dialect.Searches("t1", "d1", "f101") {
		plan := explain(t, conn, q.SQL, q.Args...)
		text := strings.Join(plan, "\n")
		conds := 0
		for _, line := range plan {
			if strings.Contains(line, "Index Cond:") {
				conds++
				if !strings.Contains(line, "tenant =") || !strings.Contains(line, "parent ") {
					t.Errorf("%s: an index condition without the tenant and the parent: %s", q.Name, line)
				}
			}
		}
		if conds == 0 || strings.Contains(text, "Seq Scan") || !strings.Contains(text, "memtool_entries_pkey") {
			t.Errorf("%s is not a range of the primary key:\n%s", q.Name, text)
		}
	}

	// A search looks up the trigram index, in a tenant large enough (in
	// one of a few files the planner rightly reads the tenant's range of
	// the primary key). VACUUM moves the rows from the index's pending
	// list into its tree, as autovacuum does.
	if _, err := conn.Exec(ctx, `INSERT INTO memtool_entries (tenant, parent, name, dir, size, data)
		SELECT 'big', 'd' || (i % 100), 'f' || i, false, 20, convert_to('note ' || i || ' on tea', 'UTF8') FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE memtool_entries`); err != nil {
		t.Fatal(err)
	}
	from, args := dialect.Index.From([]string{"quokka"}, true)
	plan := strings.Join(explain(t, conn, dialect.Bind(`SELECT e.name FROM `+from+` WHERE e.tenant = ? AND NOT e.dir`), append(args, "big")...), "\n")
	if !strings.Contains(plan, "memtool_entries_trgm") {
		t.Errorf("a search does not use the trigram index:\n%s", plan)
	}
}

// explain returns the plan of query.
func explain(t *testing.T, conn *pgx.Conn, query string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
