package sqlitestore

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestPragmas checks the settings the guarantees rest on, on both
// connection pools: WAL and synchronous=NORMAL (1), with the store's own
// fsync of the WAL (TestWriteReturnsAfterItsWALSync); and the busy timeout of
// the readers (a write waits in its own loop, see TestHeldWriteLock).
func TestPragmas(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for pool, db := range map[string]*sql.DB{"write": s.db.w, "read": s.db.r} {
		for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "1"} {
			var got string
			if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s pool: PRAGMA %s = %s, want %s", pool, pragma, got, want)
			}
		}
	}
	var got int64
	if err := s.db.r.QueryRow("PRAGMA busy_timeout").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != DefaultBusyTimeout.Milliseconds() {
		t.Errorf("read pool: PRAGMA busy_timeout = %d, want %d", got, DefaultBusyTimeout.Milliseconds())
	}
}

// TestPlans checks that looking up an entry, listing a directory and
// selecting a subtree are each a search of the primary key on the tenant
// and the parent, so that they cost what they return; and the plan of a
// search.
func TestPlans(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "m.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]string{
		"lookup":  "(tenant=? AND parent=? AND name=?)",
		"list":    "(tenant=? AND parent=?)",
		"below 1": "(tenant=? AND parent=?)",
		"below 2": "(tenant=? AND parent>? AND parent<?)",
	}
	searches := dialect.Searches("t", "d", "f")
	if len(searches) != len(want) {
		t.Fatalf("%d searches, want %d", len(searches), len(want))
	}
	for _, q := range searches {
		text := queryPlan(t, s, q.SQL, q.Args...)
		if strings.Contains(text, "SCAN") || !strings.Contains(text, "USING PRIMARY KEY "+want[q.Name]) {
			t.Errorf("%s is not a search of the primary key on %s:\n%s", q.Name, want[q.Name], text)
		}
	}

	// A search starts from the files the FTS5 index names and the pending
	// ones, and looks each up by its id and key: it costs what the index
	// finds, not the number of the tenant's files.
	from, args := dialect.Index.From([]string{"quokka"}, true)
	text := queryPlan(t, s, "SELECT e.name FROM "+from+" WHERE e.tenant = ? AND NOT e.dir", append(args, "t")...)
	for _, step := range []string{"SCAN memtool_fts VIRTUAL TABLE", "SCAN m", "SEARCH i USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH e USING PRIMARY KEY (tenant=? AND parent=? AND name=?)"} {
		if !strings.Contains(text, step) {
			t.Errorf("the plan of a search lacks %q:\n%s", step, text)
		}
	}
}

// queryPlan returns SQLite's plan of query, one step a line.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.db.r.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n")
}
