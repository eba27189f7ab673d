// Command scale measures whether a command's cost grows with the store: it
// times `view` of a small directory and `str_replace` on one file in one
// tenant, with that tenant holding 100 and then 100,000 files and the
// store holding 1,000 tenants, on each backend. See bench/scale/README.md.
//
//	go run ./bench/scale [-backends dir,sqlite,postgres] [-postgres URL]
//	                     [-tenants 1000] [-files 100,100000] [-ops 300]
//
// The stores are filled in bulk, around the store (plain files, or rows
// inserted in one transaction), because a durable write per file would
// take hours for 100,000 files; every timed command goes through
// memtool.Memory and the store's own API, as in production.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/filestore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/sqlitestore"
)

// The measured tenant is tenant-0000. Besides its files spread over
// directories of 100 (d000/f000.md, …), it has hot/, ten files of which
// hot/note.md is edited; the view lists hot/.
const (
	measured   = "tenant-0000"
	perDir     = 100
	hotFiles   = 10
	otherFiles = 10 // files of each other tenant
)

func main() {
	backends := flag.String("backends", "dir,sqlite,postgres", "backends to measure")
	pgURL := flag.String("postgres", os.Getenv("MEMTOOL_TEST_POSTGRES"), "PostgreSQL URL (default $MEMTOOL_TEST_POSTGRES); a scratch schema is created in it and dropped")
	tenants := flag.Int("tenants", 1000, "tenants in the store")
	filesFlag := flag.String("files", "100,100000", "files in the measured tenant, one measurement each")
	ops := flag.Int("ops", 300, "timed commands of each kind")
	newSchema := flag.String("new-schema", "", "only create a scratch schema in this PostgreSQL database and print its URL (for mixed.sh)")
	dropURL := flag.String("drop-schema", "", "only drop the scratch schema of this URL (for mixed.sh)")
	mixed := flag.Bool("report-mixed", false, "only report the bench exec results given as backend=file arguments (for mixed.sh)")
	flag.Parse()
	switch {
	case *newSchema != "":
		u, _, err := scratchSchema(context.Background(), *newSchema)
		if err != nil {
			fail(err)
		}
		fmt.Println(u)
		return
	case *dropURL != "":
		if err := dropSchema(context.Background(), *dropURL); err != nil {
			fail(err)
		}
		return
	case *mixed:
		if err := reportMixed(flag.Args()); err != nil {
			fail(err)
		}
		return
	}

	var sizes []int
	for _, f := range strings.Split(*filesFlag, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			fail(fmt.Errorf("-files: %q is not a count", f))
		}
		sizes = append(sizes, n)
	}
	fmt.Printf("%-9s %8s %8s %10s %14s %14s %14s %14s\n", "backend", "tenants", "files", "rows", "view µs p50", "view µs p90", "edit µs p50", "edit µs p90")
	for _, b := range strings.Split(*backends, ",") {
		if b == "postgres" && *pgURL == "" {
			fmt.Fprintln(os.Stderr, "scale: skipping postgres: no -postgres URL and no $MEMTOOL_TEST_POSTGRES")
			continue
		}
		for _, n := range sizes {
			r, err := measure(b, *pgURL, *tenants, n, *ops)
			if err != nil {
				fail(fmt.Errorf("%s, %d files: %w", b, n, err))
			}
			fmt.Printf("%-9s %8d %8d %10d %14.0f %14.0f %14.0f %14.0f\n", b, *tenants, n, r.rows, r.view[0], r.view[1], r.edit[0], r.edit[1])
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scale:", err)
	os.Exit(1)
}

type result struct {
	rows       int
	view, edit [2]float64 // p50, p90 in µs
}

// entry is one file or directory to put in a tenant's memory.
type entry struct {
	tenant, name string
	dir          bool
	data         []byte
}

// layout lists what the store holds: the measured tenant's files and the
// other tenants' few.
func layout(tenants, files int) []entry {
	var es []entry
	add := func(tenant, name string, dir bool, data string) {
		es = append(es, entry{tenant, name, dir, []byte(data)})
	}
	add(measured, "hot", true, "")
	for i := range hotFiles {
		add(measured, fmt.Sprintf("hot/h%d.md", i), false, "hot file\n")
	}
	for i := range files {
		if i%perDir == 0 {
			add(measured, fmt.Sprintf("d%03d", i/perDir), true, "")
		}
		add(measured, fmt.Sprintf("d%03d/f%03d.md", i/perDir, i%perDir), false, fmt.Sprintf("file %d\nof the measured tenant\n", i))
	}
	for t := 1; t < tenants; t++ {
		id := fmt.Sprintf("tenant-%04d", t)
		add(id, "notes", true, "")
		add(id, "hot", true, "")
		add(id, "hot/note.md", false, noteText(id))
		for i := range otherFiles {
			add(id, fmt.Sprintf("notes/n%d.md", i), false, "a note\n")
		}
	}
	return es
}

func noteText(tenant string) string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "line %d of the note of %s, about sixty characters long...\n", i, tenant)
	}
	b.WriteString("STATE-A\n")
	return b.String()
}

// measure fills a new store of the backend and times the commands.
func measure(backend, pgURL string, tenants, files, ops int) (result, error) {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "memtool-scale-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(tmp)
	es := layout(tenants, files)
	es = append(es, entry{measured, "hot/note.md", false, []byte(noteText(measured))})

	var store memtool.Store
	switch backend {
	case "dir":
		if err := fillDir(tmp, es); err != nil {
			return result{}, err
		}
		s, err := filestore.Open(filepath.Join(tmp, ".memtool-tenants", measured), nil)
		if err != nil {
			return result{}, err
		}
		defer s.Close()
		store = s
	case "sqlite":
		path := filepath.Join(tmp, "memory.db")
		s, err := sqlitestore.Open(path, nil)
		if err != nil {
			return result{}, err
		}
		defer s.Close()
		if store, err = s.Tenant(ctx, measured); err != nil {
			return result{}, err
		}
		if err := fillSQLite(path, es); err != nil {
			return result{}, err
		}
	case "postgres":
		u, drop, err := scratchSchema(ctx, pgURL)
		if err != nil {
			return result{}, err
		}
		defer drop()
		s, err := pgstore.Open(ctx, u, nil)
		if err != nil {
			return result{}, err
		}
		defer s.Close()
		if store, err = s.Tenant(ctx, measured); err != nil {
			return result{}, err
		}
		if err := fillPostgres(ctx, u, es); err != nil {
			return result{}, err
		}
	default:
		return result{}, fmt.Errorf("unknown backend %q", backend)
	}

	mem := memtool.New(store, nil)
	view := []byte(`{"command":"view","path":"/memories/hot"}`)
	edits := [2][]byte{
		[]byte(`{"command":"str_replace","path":"/memories/hot/note.md","old_str":"STATE-A","new_str":"STATE-B"}`),
		[]byte(`{"command":"str_replace","path":"/memories/hot/note.md","old_str":"STATE-B","new_str":"STATE-A"}`),
	}
	run := func(input []byte) (time.Duration, error) {
		start := time.Now()
		res := mem.Run(ctx, input)
		d := time.Since(start)
		if res.IsError {
			return 0, fmt.Errorf("%s: %s", input, res.Text)
		}
		return d, nil
	}
	// One untimed round, then the timed ones.
	if _, err := run(view); err != nil {
		return result{}, err
	}
	var views, editTimes []time.Duration
	for i := range ops {
		d, err := run(view)
		if err != nil {
			return result{}, err
		}
		views = append(views, d)
		if d, err = run(edits[i%2]); err != nil {
			return result{}, err
		}
		editTimes = append(editTimes, d)
	}
	if ops%2 == 1 {
		run(edits[1])
	}
	return result{rows: len(es), view: percentiles(views), edit: percentiles(editTimes)}, nil
}

func percentiles(ds []time.Duration) [2]float64 {
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[int(p*float64(len(ds)-1))].Nanoseconds()) / 1e3
	}
	return [2]float64{at(0.5), at(0.9)}
}

// fillDir lays the entries out as memtool's multi-tenant directory does.
func fillDir(dir string, es []entry) error {
	for _, e := range es {
		p := filepath.Join(dir, ".memtool-tenants", e.tenant, filepath.FromSlash(e.name))
		var err error
		if e.dir {
			err = os.MkdirAll(p, 0o700)
		} else {
			if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
				err = os.WriteFile(p, e.data, 0o600)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func split(name string) (string, string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// fillSQLite inserts the entries as rows of sqlitestore's table, in one
// transaction.
func fillSQLite(path string, es []entry) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(`INSERT INTO memtool_entries (tenant, parent, name, dir, size, data) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, e := range es {
		parent, base := split(e.name)
		var data any
		if !e.dir {
			data = e.data
		}
		if _, err := stmt.Exec(e.tenant, parent, base, e.dir, len(e.data), data); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.Exec(`ANALYZE`)
	return err
}

// fillPostgres copies the entries into pgstore's table.
func fillPostgres(ctx context.Context, u string, es []entry) error {
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows := make([][]any, len(es))
	for i, e := range es {
		parent, base := split(e.name)
		var data any
		if !e.dir {
			data = e.data
		}
		rows[i] = []any{e.tenant, parent, base, e.dir, int64(len(e.data)), data}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"memtool_entries"}, []string{"tenant", "parent", "name", "dir", "size", "data"}, pgx.CopyFromRows(rows)); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `ANALYZE memtool_entries`)
	return err
}

// scratchSchema creates a schema of its own in the database at base and
// returns a URL that uses it, and a function that drops it.
func scratchSchema(ctx context.Context, base string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "memtool_scale_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	withSchema := u.String()
	return withSchema, func() { dropSchema(context.Background(), withSchema) }, nil
}

// dropSchema drops the schema that the URL's search_path names.
func dropSchema(ctx context.Context, withSchema string) error {
	u, err := url.Parse(withSchema)
	if err != nil {
		return err
	}
	schema := u.Query().Get("search_path")
	if !strings.HasPrefix(schema, "memtool_scale_") {
		return fmt.Errorf("%q is not a scratch schema of this program", schema)
	}
	conn, err := pgx.Connect(ctx, withSchema)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	return err
}

// mixedResult is what reportMixed uses of a result line of `bench exec`.
type mixedResult struct {
	Workload string  `json:"workload"`
	Ops      int     `json:"ops"`
	Seconds  float64 `json:"seconds"`
	Errors   int     `json:"errors"`
}

// reportMixed prints the median ops/s (min-max) of each backend=file
// argument's result lines, per workload.
func reportMixed(args []string) error {
	fmt.Printf("%-9s %-10s %26s\n", "backend", "workload", "ops/s median (min-max)")
	for _, arg := range args {
		backend, name, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want backend=results.jsonl", arg)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		by := map[string][]float64{}
		var order []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r mixedResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if r.Errors > 0 {
				return fmt.Errorf("%s: %d commands of %s failed", backend, r.Errors, r.Workload)
			}
			if by[r.Workload] == nil {
				order = append(order, r.Workload)
			}
			by[r.Workload] = append(by[r.Workload], float64(r.Ops)/r.Seconds)
		}
		for _, wl := range order {
			v := by[wl]
			slices.Sort(v)
			fmt.Printf("%-9s %-10s %26s\n", backend, wl, fmt.Sprintf("%.0f (%.0f-%.0f, %d runs)", v[len(v)/2], v[0], v[len(v)-1], len(v)))
		}
	}
	return nil
}
