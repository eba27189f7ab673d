package sqlitestore_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/sqlitestore"
	"github.com/memtool/memtool/storetest"
)

// churnEnv, set to a database file, makes TestSearchIndexAfterCrash the
// writer it kills: storetest.Churn on that file until the kill.
const churnEnv = "SQLITESTORE_TEST_CHURN"

// A writer killed (SIGKILL) in the middle of its writes leaves an index
// that finds exactly the lines a scan finds: the index changes in the
// write's transaction, so it commits or rolls back with it.
func TestSearchIndexAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	storetest.ChurnKilled(t, churnEnv, path, func(path string) (memtool.Store, error) { return sqlitestore.Open(path, nil) }, rounds, func(t *testing.T) {
		storetest.CheckSearchIndex(t, open(t, path), storetest.ChurnQueries...)
	})
}

// A file of schema version 1, made before search, gets its index when it
// is opened, once, however many stores open it at once; and a read-only
// one opens without it, and is scanned.
func TestSearchIndexMigration(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`
CREATE TABLE memtool_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE memtool_entries (tenant TEXT NOT NULL, parent TEXT NOT NULL, name TEXT NOT NULL, dir INTEGER NOT NULL, size INTEGER NOT NULL, data BLOB, PRIMARY KEY (tenant, parent, name)) WITHOUT ROWID;
INSERT INTO memtool_meta VALUES ('schema_version', '1'), ('tenancy', 'single');
INSERT INTO memtool_entries VALUES ('', '', 'd', 1, 0, NULL), ('', 'd', 'a.md', 0, 21, CAST('the quokka
and wombat' AS BLOB)), ('', '', 'b.md', 0, 11, CAST('Quokka here' AS BLOB));`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(t.TempDir(), "ro.db")
	copyFile(t, path, ro)
	os.Chmod(ro, 0o444)

	stores := make([]memtool.Store, 4)
	var fns []func()
	for i := range stores {
		fns = append(fns, func() { stores[i] = open(t, path) })
	}
	storetest.Together(fns...)
	for _, s := range stores {
		storetest.CheckSearchIndex(t, s, "quokka", "wombat")
	}
	r, err := memtool.Search(t.Context(), stores[0], memtool.SearchQuery{Query: "quokka"}, 0)
	if err != nil || r.Total != 2 {
		t.Errorf("Search(quokka) after the migration: %+v, %v; want 2 lines", r, err)
	}

	if os.Getuid() == 0 {
		t.Skip("root writes read-only files")
	}
	s := open(t, ro)
	if err := s.SearchFiles(t.Context(), "", memtool.IndexQuery{Terms: []string{"quokka"}, Limit: 100}, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("SearchFiles on a read-only version 1 file: %v, want ErrUnsupported", err)
	}
	if r, err := memtool.Search(t.Context(), s, memtool.SearchQuery{Query: "quokka"}, 0); err != nil || r.Total != 2 {
		t.Errorf("Search(quokka) on a read-only version 1 file: %+v, %v; want 2 lines", r, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file of schema version 2, whose index kept a replaced file's old
// text, gets version 3's index when it is opened: each file's text in it
// once.
func TestSearchIndexMigrationFromVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path)
	for i := range 10 {
		if err := s.WriteFile(t.Context(), fmt.Sprintf("f%d.md", i), []byte(fmt.Sprintf("quokka %d", i)), memtool.Replace); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Version 2 had no pending list; an old text left behind is a row
	// of the index under an id no file has.
	if _, err := db.Exec(`DROP TABLE memtool_fts_pending; INSERT INTO memtool_fts (rowid, body) VALUES (1000, 'stale wombat');
		UPDATE memtool_meta SET value = '2' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	var version string
	var docs int
	if err := db.QueryRow(`SELECT (SELECT value FROM memtool_meta WHERE key = 'schema_version'), (SELECT count(*) FROM memtool_fts_docsize)`).Scan(&version, &docs); err != nil || version != "3" || docs != 10 {
		t.Errorf("after the migration: version %s, %d texts indexed, %v; want 3 and 10", version, docs, err)
	}
	storetest.CheckSearchIndex(t, s, "quokka", "wombat")
}

// A file that is not valid UTF-8 is found as a scan finds it: FTS5's
// trigram tokenizer reads a character followed by stray continuation
// bytes as another character, so the index holds no trigram that ends
// in it (here "bé" + 0xa9). The file is folded into the FTS5 index by
// the writes after it.
func TestSearchIndexInvalidUTF8(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := s.WriteFile(t.Context(), "odd.md", []byte("the abé\xa9 tail\nxyzé\xa9\xa9\n"), memtool.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		if err := s.WriteFile(t.Context(), fmt.Sprintf("f%d.md", i), []byte("filler"), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	storetest.CheckSearchIndex(t, s, "the abé", "abé", "xyzé")
}
