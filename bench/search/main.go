// Command search measures memtool.Search on a large memory: one tenant of
// -files files of -lines lines each, in 100 directories, on SQLite (FTS5
// trigram index), PostgreSQL (pg_trgm GIN index, with -pg) and the
// directory store (a scan). It prints the p50 and p90 of a literal query
// for a word a few files hold, and of one every file holds, and the cost
// of a durable write (a 20-line file replaced) with the index and
// without it, alternating the two stores so the machine's load weighs on
// both alike. See docs/search.md.
//
//	go run ./bench/search -dir /tmp/searchbench -pg "$MEMTOOL_TEST_POSTGRES"
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/sqlitestore"
)

var (
	files   = flag.Int("files", 100000, "files in the tenant")
	lines   = flag.Int("lines", 20, "lines per file")
	dir     = flag.String("dir", "", "a directory for the databases and the directory store (required)")
	pgURL   = flag.String("pg", "", "a PostgreSQL URL (its search_path schema must be empty); none: SQLite and the directory only")
	queries = flag.Int("queries", 30, "queries timed on each indexed store")
	scans   = flag.Int("scans", 5, "queries timed on the directory store")
	writes  = flag.Int("writes", 300, "writes timed with the index and without")
	skip    = flag.String("skip", "", "comma-separated stores to skip: sqlite, pg, dir")
)

const tenant = "bench"

// words is the vocabulary of the files; rare words go into a few files each.
var words = strings.Fields("memory user prefers green tea project deadline meeting notes design review budget " +
	"database server client request answer error retry cache index search query result page version release " +
	"monday tuesday friday morning evening weekly report decision reason because always never often")

func main() {
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	ctx := context.Background()
	rows := generate()
	fmt.Printf("%d files x %d lines, %d MB of text, one tenant\n", *files, *lines, textBytes(rows)>>20)
	if !strings.Contains(*skip, "sqlite") {
		benchSQLite(ctx, rows)
	}
	if *pgURL != "" && !strings.Contains(*skip, "pg") {
		benchPostgres(ctx, rows)
	}
	if !strings.Contains(*skip, "dir") {
		benchDir(ctx, rows)
	}
}

type row struct{ parent, name, text string }

func textBytes(rows []row) (n int) {
	for _, r := range rows {
		n += len(r.text)
	}
	return n
}

// rareWord is the k-th rare word, which 5 files hold.
func rareWord(k int) string { return fmt.Sprintf("quokka%03d", k) }

func generate() []row {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]row, *files)
	for i := range rows {
		var b strings.Builder
		for l := range *lines {
			fmt.Fprintf(&b, "line %d:", l+1)
			for range 6 {
				b.WriteString(" " + words[rng.IntN(len(words))])
			}
			b.WriteByte('\n')
		}
		rows[i] = row{fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%06d.md", i), b.String()}
	}
	for k := range *queries {
		for range 5 {
			r := &rows[rng.IntN(len(rows))]
			r.text += "a note on " + rareWord(k) + "\n"
		}
	}
	return rows
}

func benchSQLite(ctx context.Context, rows []row) {
	path := filepath.Join(*dir, "search.db")
	plain := filepath.Join(*dir, "noindex.db")
	load := func(path string, index bool) *sqlitestore.Store {
		os.Remove(path)
		s, err := sqlitestore.Open(path, nil)
		check(err)
		_, err = s.Tenant(ctx, tenant)
		check(err)
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
		check(err)
		defer db.Close()
		if !index {
			_, err = db.Exec(`DROP TRIGGER memtool_fts_insert; DROP TRIGGER memtool_fts_update; DROP TRIGGER memtool_fts_move; DROP TRIGGER memtool_fts_delete; DROP TABLE memtool_fts; DROP TABLE memtool_fts_id`)
			check(err)
		}
		start := time.Now()
		tx, err := db.Begin()
		check(err)
		for d := range 100 {
			_, err = tx.Exec(`INSERT INTO memtool_entries VALUES (?, '', ?, 1, 0, NULL)`, tenant, fmt.Sprintf("d%03d", d))
			check(err)
		}
		for _, r := range rows {
			_, err = tx.Exec(`INSERT INTO memtool_entries VALUES (?, ?, ?, 0, ?, ?)`, tenant, r.parent, r.name, len(r.text), []byte(r.text))
			check(err)
		}
		check(tx.Commit())
		fmt.Printf("sqlite: loaded (index %v) in %v\n", index, time.Since(start).Round(time.Millisecond))
		return s
	}
	s, n := load(path, true), load(plain, false)
	defer s.Close()
	defer n.Close()
	ts, err := s.Tenant(ctx, tenant)
	check(err)
	tn, err := n.Tenant(ctx, tenant)
	check(err)
	timeQueries("sqlite (FTS5 trigram)", ctx, ts, *queries)
	timeWrites("sqlite", ctx, ts, tn)
}

func benchPostgres(ctx context.Context, rows []row) {
	s, err := pgstore.Open(ctx, *pgURL, nil)
	check(err)
	defer s.Close()
	ok, err := s.HasSearchIndex(ctx)
	check(err)
	if !ok {
		log.Fatal("postgres: no search index (pg_trgm is missing)")
	}
	conn, err := pgx.Connect(ctx, *pgURL)
	check(err)
	defer conn.Close(ctx)
	_, err = s.Tenant(ctx, tenant)
	check(err)
	start := time.Now()
	var copied [][]any
	for d := range 100 {
		copied = append(copied, []any{tenant, "", fmt.Sprintf("d%03d", d), true, int64(0), nil})
	}
	for _, r := range rows {
		copied = append(copied, []any{tenant, r.parent, r.name, false, int64(len(r.text)), []byte(r.text)})
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"memtool_entries"}, []string{"tenant", "parent", "name", "dir", "size", "data"}, pgx.CopyFromRows(copied))
	check(err)
	_, err = conn.Exec(ctx, `ANALYZE memtool_entries`)
	check(err)
	fmt.Printf("postgres: loaded in %v\n", time.Since(start).Round(time.Millisecond))
	ts, err := s.Tenant(ctx, tenant)
	check(err)
	timeQueries("postgres (pg_trgm GIN)", ctx, ts, *queries)
	// Without the index: the same store after DROP INDEX, then the index
	// built again, alternating by batches (one database, one schema).
	timeWritesPG(ctx, ts, conn)
}

func benchDir(ctx context.Context, rows []row) {
	root := filepath.Join(*dir, "files")
	os.RemoveAll(root)
	start := time.Now()
	for _, r := range rows {
		p := filepath.Join(root, r.parent, r.name)
		check(os.MkdirAll(filepath.Dir(p), 0o700))
		check(os.WriteFile(p, []byte(r.text), 0o600))
	}
	fmt.Printf("dir: written in %v\n", time.Since(start).Round(time.Millisecond))
	s, err := filestore.Open(root, nil)
	check(err)
	defer s.Close()
	timeQueries("directory (scan)", ctx, s, *scans)
}

// timeQueries times n searches for rare words, and a few for a common one.
func timeQueries(name string, ctx context.Context, s memtool.Store, n int) {
	var rare []time.Duration
	for k := range n {
		start := time.Now()
		r, err := memtool.Search(ctx, s, memtool.SearchQuery{Query: rareWord(k)}, 0)
		rare = append(rare, time.Since(start))
		check(err)
		if r.Total < 1 {
			log.Fatalf("%s: %s found nothing", name, rareWord(k))
		}
	}
	var common []time.Duration
	for range min(n, 3) {
		start := time.Now()
		_, err := memtool.Search(ctx, s, memtool.SearchQuery{Query: "green tea", Limit: 100}, 0)
		common = append(common, time.Since(start))
		check(err)
	}
	fmt.Printf("%s: rare word p50 %v p90 %v (%d queries); common phrase (every file) p50 %v\n",
		name, pct(rare, 50), pct(rare, 90), len(rare), pct(common, 50))
}

func pct(d []time.Duration, p int) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[(len(d)-1)*p/100].Round(100 * time.Microsecond)
}

func newText(rng *rand.Rand) []byte {
	var b strings.Builder
	for l := range 20 {
		fmt.Fprintf(&b, "line %d:", l+1)
		for range 6 {
			b.WriteString(" " + words[rng.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// timeWrites alternates a durable replace of a 20-line file in the
// indexed store and in the one without the index.
func timeWrites(name string, ctx context.Context, indexed, plain memtool.Store) {
	rng := rand.New(rand.NewPCG(3, 4))
	var with, without time.Duration
	for i := range *writes {
		name := fmt.Sprintf("d%03d/f%06d.md", i%100, rng.IntN(*files))
		data := newText(rng)
		start := time.Now()
		check(indexed.WriteFile(ctx, name, data, memtool.Replace))
		with += time.Since(start)
		start = time.Now()
		check(plain.WriteFile(ctx, name, data, memtool.Replace))
		without += time.Since(start)
	}
	report(name, with, without)
}

func report(name string, with, without time.Duration) {
	n := time.Duration(*writes)
	fmt.Printf("%s: write (replace a 20-line file) with index %v, without %v: %.2fx\n",
		name, (with / n).Round(time.Microsecond), (without / n).Round(time.Microsecond), float64(with)/float64(without))
}

// timeWritesPG times writes with the index, then drops it and times
// them without, in batches that alternate (the index is built again
// between batches, untimed).
func timeWritesPG(ctx context.Context, s memtool.Store, conn *pgx.Conn) {
	rng := rand.New(rand.NewPCG(3, 4))
	var with, without time.Duration
	const batches = 3
	per := *writes / batches
	var def string
	check(conn.QueryRow(ctx, `SELECT pg_get_indexdef(to_regclass('memtool_entries_trgm'))`).Scan(&def))
	batch := func() (d time.Duration) {
		for range per {
			name := fmt.Sprintf("d%03d/f%06d.md", rng.IntN(100), rng.IntN(*files))
			data := newText(rng)
			start := time.Now()
			check(s.WriteFile(ctx, name, data, memtool.Replace))
			d += time.Since(start)
		}
		return d
	}
	for range batches {
		with += batch()
		_, err := conn.Exec(ctx, `DROP INDEX memtool_entries_trgm`)
		check(err)
		without += batch()
		_, err = conn.Exec(ctx, def)
		check(err)
	}
	*writes = per * batches
	report("postgres", with, without)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
