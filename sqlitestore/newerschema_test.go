package sqlitestore_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtool/memtool/sqlitestore"
)

// A file of a schema version later than this memtool knows is refused,
// and left as it is: Open creates none of its own tables there (a later
// version may have renamed or dropped them), and changes nothing else.
func TestNewerSchemaLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// As a later version might leave it: the entries under another name.
	_, err = db.Exec(`PRAGMA journal_mode=WAL;
CREATE TABLE memtool_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE memtool_entries_v10 (tenant TEXT NOT NULL, parent TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (tenant, parent, name)) WITHOUT ROWID;
INSERT INTO memtool_meta VALUES ('schema_version', '10'), ('tenancy', 'single');`)
	if err != nil {
		t.Fatal(err)
	}
	schema := func() string {
		t.Helper()
		var names []string
		rows, err := db.Query(`SELECT name FROM sqlite_schema ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		return strings.Join(names, " ")
	}
	before := schema()
	s, err := sqlitestore.Open(path, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open of a file of schema version 10 succeeded")
	}
	if !strings.Contains(err.Error(), "version 10") {
		t.Errorf("Open of a file of schema version 10: %v, want an error that names the version", err)
	}
	if after := schema(); after != before {
		t.Errorf("Open of a file of schema version 10 changed its schema:\nbefore %s\n after %s", before, after)
	}
}
