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
// they return and not the size of the table. The planner is told to avoid
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
		rows, err := conn.Query(ctx, "EXPLAIN "+q.SQL, q.Args...)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
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
}
