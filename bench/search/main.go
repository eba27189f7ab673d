// Command search measures memtool.Search on a large memory: -files files
// of -lines lines each, in one tenant or spread over -tenants tenants, on
// SQLite (FTS5 trigram index), PostgreSQL (pg_trgm GIN index, with -pg)
// and the directory store (a scan). See docs/search.md for what it
// measures and the figures.
//
// Queries: the p50 and p90 of a literal query, in one tenant, for a word
// a few of that tenant's files hold (and as many files of other tenants),
// and the p50 of a phrase every file holds.
//
// Writes: the cost of a durable write (an existing 20-line file replaced
// by new text) with the index and without it. Two stores hold the same
// files, one with the index and one without (for PostgreSQL, two schemas
// of one database); each pair of writes puts the same text at the same
// name in both, in an order drawn at random, so that the machine's load
// weighs on both alike. It prints the mean of each, their ratio, the
// median of the pairs' ratios, and the load average before and after.
//
//	go run ./bench/search -dir /tmp/searchbench -pg "$MEMTOOL_TEST_POSTGRES"
//	go run ./bench/search -dir /tmp/searchbench -tenants 1000 [-shape big]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memtool/memtool"
)

var (
	files   = flag.Int("files", 100000, "files in all")
	lines   = flag.Int("lines", 20, "lines per file")
	tenants = flag.Int("tenants", 1, "tenants the files are spread over")
	shape   = flag.String("shape", "even", "with -tenants: even (the same number of files each) or big (half the files in the tenant queried, the rest spread over the others)")
	dir     = flag.String("dir", "", "a directory for the databases and the directory store (required)")
	pgURL   = flag.String("pg", "", "a PostgreSQL URL; the benchmark makes and drops the schemas memtool_bench_index and memtool_bench_plain in its database. None: SQLite and the directory only")
	queries = flag.Int("queries", 30, "queries timed on each indexed store")
	scans   = flag.Int("scans", 5, "queries timed on the directory store")
	writes  = flag.Int("writes", 3000, "pairs of writes timed (one with the index, one without)")
	skip    = flag.String("skip", "", "comma-separated stores to skip: sqlite, pg, dir")
)

// words is the vocabulary of the files; rare words go into a few files each.
var words = strings.Fields("memory user prefers green tea project deadline meeting notes design review budget " +
	"database server client request answer error retry cache index search query result page version release " +
	"monday tuesday friday morning evening weekly report decision reason because always never often")

func main() {
	flag.Parse()
	if *dir == "" || *tenants < 1 || *files < *tenants || (*shape != "even" && *shape != "big") {
		log.Fatal("-dir is required; -tenants must be 1 to -files; -shape even or big")
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m := generate()
	fmt.Printf("%s: %d files x %d lines, %d MB of text, %d tenants (%s), the tenant queried holds %d files; load average %s\n",
		time.Now().UTC().Format(time.RFC3339), *files, *lines, textBytes(m.rows)>>20, *tenants, *shape, m.queried, loadavg())
	if !strings.Contains(*skip, "sqlite") {
		benchSQLite(ctx, m)
	}
	if *pgURL != "" && !strings.Contains(*skip, "pg") {
		benchPostgres(ctx, m)
	}
	if !strings.Contains(*skip, "dir") {
		benchDir(ctx, m)
	}
}

// A row is one file of the memory.
type row struct{ tenant, parent, name, text string }

// A memory is the files of the benchmark.
type memory struct {
	rows    []row
	tenants []string
	queried int // files of tenants[0], the tenant queried
}

func textBytes(rows []row) (n int) {
	for _, r := range rows {
		n += len(r.text)
	}
	return n
}

// rareWord is the k-th rare word, which 5 files of the tenant queried
// hold, and 5 files of other tenants.
func rareWord(k int) string { return fmt.Sprintf("quokka%03d", k) }

func tenantName(i int) string { return fmt.Sprintf("t%04d", i) }

func generate() memory {
	rng := rand.New(rand.NewPCG(1, 2))
	m := memory{rows: make([]row, *files)}
	for i := range *tenants {
		m.tenants = append(m.tenants, tenantName(i))
	}
	for i := range m.rows {
		t := i % *tenants
		if *shape == "big" && *tenants > 1 {
			t = 0
			if i%2 == 1 {
				t = 1 + i/2%(*tenants-1)
			}
		}
		m.rows[i] = row{tenantName(t), fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%06d.md", i), text(rng, *lines)}
		if t == 0 {
			m.queried++
		}
	}
	var mine, others []int
	for i, r := range m.rows {
		if r.tenant == m.tenants[0] {
			mine = append(mine, i)
		} else {
			others = append(others, i)
		}
	}
	for k := range *queries {
		for range 5 {
			m.rows[mine[rng.IntN(len(mine))]].text += "a note on " + rareWord(k) + "\n"
			if len(others) > 0 {
				m.rows[others[rng.IntN(len(others))]].text += "a note on " + rareWord(k) + "\n"
			}
		}
	}
	return m
}

// text returns n lines of words.
func text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for l := range n {
		fmt.Fprintf(&b, "line %d:", l+1)
		for range 6 {
			b.WriteString(" " + words[rng.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// timeQueries times n searches for rare words in the store of the tenant
// queried, and a few for a phrase every file holds.
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
	fmt.Printf("%s: rare word p50 %v p90 %v (%d queries); phrase every file holds p50 %v; load average %s\n",
		name, pct(rare, 50), pct(rare, 90), len(rare), pct(common, 50), loadavg())
}

func pct(d []time.Duration, p int) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[(len(d)-1)*p/100].Round(100 * time.Microsecond)
}

// timeWrites times -writes pairs of durable writes: each replaces an
// existing file of the tenant queried with new text, in the store with
// the index and in the one without, in an order drawn for each pair.
func timeWrites(name string, ctx context.Context, m memory, indexed, plain memtool.Store) {
	rng := rand.New(rand.NewPCG(3, 4))
	var mine []row
	for _, r := range m.rows {
		if r.tenant == m.tenants[0] {
			mine = append(mine, r)
		}
	}
	before := loadavg()
	var with, without time.Duration
	var ratios []float64
	for range *writes {
		r := mine[rng.IntN(len(mine))]
		name, data := r.parent+"/"+r.name, []byte(text(rng, 20))
		var d [2]time.Duration
		first := rng.IntN(2)
		for j := range 2 {
			s := indexed
			if (j+first)%2 == 1 {
				s = plain
			}
			start := time.Now()
			check(s.WriteFile(ctx, name, data, memtool.Replace))
			if s == indexed {
				d[0] = time.Since(start)
			} else {
				d[1] = time.Since(start)
			}
		}
		with += d[0]
		without += d[1]
		ratios = append(ratios, float64(d[0])/float64(d[1]))
	}
	slices.Sort(ratios)
	n := time.Duration(*writes)
	fmt.Printf("%s: write (replace a 20-line file, %d pairs) with the index %v, without %v: %.2fx (median of the pairs' ratios %.2fx); load average before %s, after %s\n",
		name, *writes, (with / n).Round(time.Microsecond), (without / n).Round(time.Microsecond),
		float64(with)/float64(without), ratios[len(ratios)/2], before, loadavg())
}

// loadavg is the first three fields of /proc/loadavg, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
