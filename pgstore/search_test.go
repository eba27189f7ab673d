package pgstore_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/internal/sqltree/sqltreetest"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/pgstore/pgtest"
	"github.com/memtool/memtool/storetest"
)

func TestSearch(t *testing.T) {
	sqltreetest.Search(t, pgtest.URL, func(t *testing.T, url string) memtool.Store { return open(t, url) })
}

// The database has the trigram index (pg_trgm must be installable on the
// test server), and the index narrows: it names the files that hold the
// terms, and only them.
func TestSearchIndex(t *testing.T) {
	s := open(t, pgtest.URL(t))
	ctx := t.Context()
	if ok, err := s.HasSearchIndex(ctx); err != nil || !ok {
		t.Fatalf("HasSearchIndex: %v, %v; want the index (is pg_trgm installable?)", ok, err)
	}
	for name, text := range map[string]string{"a.md": "the Quokka smiles", "b.md": "a wombat", "c.md": "QUOKKAS and wombats", "d.md": "100% quo\\kka_ café"} {
		if err := s.WriteFile(ctx, name, []byte(text), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q    memtool.IndexQuery
		want []string
	}{
		{memtool.IndexQuery{Terms: []string{"quokka"}, FoldCase: true}, []string{"a.md", "c.md"}},
		{memtool.IndexQuery{Terms: []string{"Quokka"}}, []string{"a.md"}},
		{memtool.IndexQuery{Terms: []string{"QUOKKA", "wombat"}, FoldCase: true}, []string{"c.md"}},
		{memtool.IndexQuery{Terms: []string{"0% q"}}, []string{"d.md"}},
		{memtool.IndexQuery{Terms: []string{"o\\kka_"}}, []string{"d.md"}},
		{memtool.IndexQuery{Terms: []string{"afé"}}, []string{"d.md"}},
		{memtool.IndexQuery{Terms: []string{"a_e"}}, nil},
	} {
		c.q.Limit = 1 << 20
		var got []string
		err := s.SearchFiles(ctx, "", c.q, func(name string, data []byte) error {
			got = append(got, name)
			return nil
		})
		slices.Sort(got)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SearchFiles(%+v): %v, %v; want %v", c.q, got, err, c.want)
		}
	}
}

// A database of schema version 1, made before search, gets its index when
// it is opened, once, however many stores open it at once.
func TestSearchIndexMigration(t *testing.T) {
	url := pgtest.URL(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		pgstore.FirstMigration,
		`CREATE TABLE memtool_schema_version (version integer NOT NULL)`,
		`INSERT INTO memtool_schema_version VALUES (1)`,
		`INSERT INTO memtool_meta VALUES ('tenancy', 'single')`,
		`INSERT INTO memtool_entries VALUES ('', '', 'd', true, 0, NULL), ('', 'd', 'a.md', false, 21, 'the quokka` + "\n" + `and wombat'), ('', '', 'b.md', false, 11, 'Quokka here')`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	conn.Close(ctx)
	stores := make([]*pgstore.Store, 4)
	var fns []func()
	for i := range stores {
		fns = append(fns, func() { stores[i] = open(t, url) })
	}
	storetest.Together(fns...)
	if ok, err := stores[0].HasSearchIndex(ctx); err != nil || !ok {
		t.Fatalf("HasSearchIndex after the migration: %v, %v", ok, err)
	}
	for _, s := range stores {
		storetest.CheckSearchIndex(t, s, "quokka", "wombat")
	}
	r, err := memtool.Search(ctx, stores[0], memtool.SearchQuery{Query: "quokka"}, 0)
	if err != nil || r.Total != 2 {
		t.Errorf("Search(quokka) after the migration: %+v, %v; want 2 lines", r, err)
	}
}

// A writer killed (SIGKILL) in the middle of its writes leaves an index
// that finds exactly the lines a scan finds: the server aborts the
// transaction of a client that is gone, index entries with it. A killed
// client's last COMMIT may still be running on the server when the kill
// returns, so each check first waits until the writer's sessions have left
// the server (their application_name marks them); otherwise that commit can
// land between the indexed search and the scan it is compared with.
func TestSearchIndexAfterCrash(t *testing.T) {
	url := os.Getenv("PGSTORE_TEST_CHURN")
	if url == "" {
		url = pgtest.URL(t)
	}
	app := fmt.Sprintf("memtool_churn_%d", time.Now().UnixNano())
	writer := url + "&application_name=" + app
	if !strings.Contains(url, "?") {
		writer = url + "?application_name=" + app
	}
	storetest.ChurnKilled(t, "PGSTORE_TEST_CHURN", writer, func(url string) (memtool.Store, error) { return pgstore.Open(context.Background(), url, nil) }, 4, func(t *testing.T) {
		waitSessionsGone(t, url, app)
		storetest.CheckSearchIndex(t, open(t, url), storetest.ChurnQueries...)
	})
}

// waitSessionsGone waits until no session named app is left on the server
// of url, for up to 30 seconds.
func waitSessionsGone(t *testing.T, url, app string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of the killed writer still on the server after 30 s", n)
		}
	}
}

// Without its index (an operator may drop memtool_entries_trgm to spare
// every write its upkeep; see the package doc), search finds what it
// finds with it, by a scan on the server; opening the store again does
// not make the index again.
func TestSearchWithoutIndex(t *testing.T) {
	sqltreetest.Search(t, pgtest.URL, func(t *testing.T, url string) memtool.Store {
		s := open(t, url)
		conn := connect(t, url)
		if _, err := conn.Exec(t.Context(), `DROP INDEX IF EXISTS memtool_entries_trgm`); err != nil {
			t.Fatal(err)
		}
		if ok, err := open(t, url).HasSearchIndex(t.Context()); err != nil || ok {
			t.Fatalf("HasSearchIndex after DROP INDEX and a new Open: %v, %v; want no index", ok, err)
		}
		return s
	})
}

// In a database whose collation lowers ASCII letters as Turkish does ('I'
// to dotless 'ı'), a search that ignores case finds "TITLE" for "title",
// as a scan does: ILIKE lowers both sides with the database's collation.
func TestSearchTurkishCollation(t *testing.T) {
	ctx := t.Context()
	base := os.Getenv(pgtest.EnvVar)
	pgtest.URL(t) // skips the test without a server
	admin := connect(t, base)
	name := fmt.Sprintf("memtool_test_tr_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'tr-TR' LOCALE 'C.UTF-8'"); err != nil {
		pgtest.Unavailable(t, "no database with a Turkish ICU collation: "+err.Error())
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	s := open(t, u.String())
	if ok, err := s.HasSearchIndex(ctx); err != nil || !ok {
		t.Fatalf("HasSearchIndex: %v, %v; want the index", ok, err)
	}
	for name, text := range map[string]string{"a.md": "TITLE of it", "b.md": "the title", "c.md": "Tıtle", "d.md": "nothing"} {
		if err := s.WriteFile(ctx, name, []byte(text), memtool.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	storetest.CheckSearchIndex(t, s, "title", "TITLE", "le of it", "IT")
}
