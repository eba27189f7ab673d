package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/objectstore"
	"github.com/memtool/memtool/pgstore"
	"github.com/memtool/memtool/sqlitestore"
)

// migrateLimit is the largest file migrate copies: far above what memtool
// writes (MaxFileSize), so that nothing a store holds is left behind.
const migrateLimit = 1 << 30

func runMigrate(ctx context.Context, env *cliEnv, args []string) int {
	var (
		from, to, tenant string
		allTenants       bool
		force            bool
	)
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: memtool migrate --from URL --to URL [--tenant ID | --all-tenants] [--force]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&from, "from", "", "the store to copy (a store URL, as for --store)")
	fs.StringVar(&to, "to", "", "the store to copy into")
	fs.StringVar(&tenant, "tenant", "", "copy only this tenant's memory, into the same tenant of the target")
	fs.BoolVar(&allTenants, "all-tenants", false, "copy every tenant of a multi-tenant store")
	fs.BoolVar(&force, "force", false, "write into a target that is not empty (files of the same name are replaced)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	switch {
	case len(rest) > 0:
		fmt.Fprintf(env.stderr, "memtool migrate: unexpected argument %q\n", rest[0])
		return exitUsage
	case from == "" || to == "":
		fmt.Fprintln(env.stderr, "memtool migrate: both --from and --to are needed")
		return exitUsage
	case tenant != "" && allTenants:
		fmt.Fprintln(env.stderr, "memtool migrate: --tenant and --all-tenants exclude each other")
		return exitUsage
	case from == to:
		fmt.Fprintln(env.stderr, "memtool migrate: --from and --to are the same store")
		return exitUsage
	}

	if err := checkSourceExists(from); err != nil {
		fmt.Fprintf(env.stderr, "memtool migrate: --from: %v\n", err)
		return exitStore
	}
	tenants := []string{tenant}
	if allTenants {
		if tenants, err = listTenants(ctx, from); err != nil {
			fmt.Fprintf(env.stderr, "memtool migrate: %v\n", err)
			return exitStore
		}
	}
	var pairs []migration
	defer func() {
		for _, p := range pairs {
			p.close()
		}
	}()
	for _, id := range tenants {
		src, srcCloser, err := openStore(ctx, from, id)
		if err != nil {
			fmt.Fprintf(env.stderr, "memtool migrate: --from: %v\n", err)
			return exitStore
		}
		dst, dstCloser, err := openStore(ctx, to, id)
		if err != nil {
			srcCloser.Close()
			fmt.Fprintf(env.stderr, "memtool migrate: --to: %v\n", err)
			return exitStore
		}
		pairs = append(pairs, migration{tenant: id, src: src, dst: dst, closers: []io.Closer{srcCloser, dstCloser}})
	}

	// Refuse before anything is written.
	if !force {
		for _, p := range pairs {
			entries, err := p.dst.ReadDir(ctx, "")
			if err != nil {
				fmt.Fprintf(env.stderr, "memtool migrate: --to%s: %v\n", p.label(), err)
				return exitStore
			}
			if len(entries) > 0 {
				fmt.Fprintf(env.stderr, "memtool migrate: the target%s is not empty (%d entries in /memories); add --force to copy into it anyway\n", p.label(), len(entries))
				return exitFailed
			}
		}
	}

	var plans []*plan
	var total plan
	for _, p := range pairs {
		pl, err := planCopy(ctx, p.src)
		if err != nil {
			fmt.Fprintf(env.stderr, "memtool migrate: reading the source%s: %v\n", p.label(), err)
			return exitFailed
		}
		plans = append(plans, pl)
		total.files = append(total.files, pl.files...)
		total.dirs = append(total.dirs, pl.dirs...)
		total.bytes += pl.bytes
	}
	prog := newProgress(env.stderr, len(total.files), total.bytes)
	var sum migrateSummary
	for i, p := range pairs {
		s, err := copyStore(ctx, p.src, p.dst, plans[i], force, prog)
		sum.add(s)
		if err != nil {
			prog.done()
			fmt.Fprintf(env.stderr, "memtool migrate%s: %v\n", p.label(), err)
			return exitFailed
		}
	}
	prog.done()
	what := ""
	if allTenants {
		what = fmt.Sprintf(" of %d tenants", len(pairs))
	} else if tenant != "" {
		what = fmt.Sprintf(" of tenant %s", tenant)
	}
	_, err = fmt.Fprintf(env.stdout, "copied %d files (%s) and %d directories%s from %s to %s; every file verified by SHA-256, read back from the target\n",
		sum.files, humanBytes(sum.bytes), sum.dirs, what, from, to)
	if err != nil {
		return exitBrokenIO
	}
	return exitOK
}

// migration is one source memory and its target.
type migration struct {
	tenant   string
	src, dst memtool.Store
	closers  []io.Closer
}

func (m migration) label() string {
	if m.tenant == "" {
		return ""
	}
	return " (tenant " + m.tenant + ")"
}

func (m migration) close() {
	for _, c := range m.closers {
		c.Close()
	}
}

// plan is what a source holds: its directories (parents before children)
// and its files, and the files' total size.
type plan struct {
	dirs  []string
	files []string
	bytes int64
}

func planCopy(ctx context.Context, src memtool.Store) (*plan, error) {
	p := &plan{}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := src.ReadDir(ctx, dir)
		if err != nil {
			return err
		}
		slices.SortFunc(entries, func(a, b memtool.FileInfo) int { return strings.Compare(a.Name, b.Name) })
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			switch {
			case e.IsDir():
				p.dirs = append(p.dirs, name)
				if err := walk(name); err != nil {
					return err
				}
			case e.IsRegular():
				p.files = append(p.files, name)
				p.bytes += e.Size
			default:
				return fmt.Errorf("/memories/%s is neither a file nor a directory; memtool cannot copy it", name)
			}
		}
		return nil
	}
	return p, walk("")
}

type migrateSummary struct {
	files, dirs int
	bytes       int64
}

func (s *migrateSummary) add(o migrateSummary) {
	s.files += o.files
	s.dirs += o.dirs
	s.bytes += o.bytes
}

// copyStore copies the plan from src to dst, then reads every file back
// from dst and compares its SHA-256 with the source's. Without force it
// creates only (a file that appeared in the target meanwhile is an error);
// with force it replaces files and keeps directories that are there.
func copyStore(ctx context.Context, src, dst memtool.Store, p *plan, force bool, prog *progress) (migrateSummary, error) {
	var sum migrateSummary
	for _, d := range p.dirs {
		err := dst.Mkdir(ctx, d)
		if force && errors.Is(err, memtool.ErrExist) {
			if fi, serr := dst.Stat(ctx, d); serr == nil && fi.IsDir() {
				err = nil
			}
		}
		if err != nil {
			return sum, fmt.Errorf("directory /memories/%s: %w", d, err)
		}
		sum.dirs++
	}
	mode := memtool.CreateOnly
	if force {
		mode = memtool.Replace
	}
	sums := make(map[string][sha256.Size]byte, len(p.files))
	for _, f := range p.files {
		data, err := src.ReadFile(ctx, f, migrateLimit)
		if err != nil {
			return sum, fmt.Errorf("reading /memories/%s: %w", f, err)
		}
		if err := dst.WriteFile(ctx, f, data, mode); err != nil {
			return sum, fmt.Errorf("writing /memories/%s: %w", f, err)
		}
		sums[f] = sha256.Sum256(data)
		sum.files++
		sum.bytes += int64(len(data))
		prog.add(int64(len(data)))
	}
	var bad []string
	for _, f := range p.files {
		got, err := dst.ReadFile(ctx, f, migrateLimit)
		if err != nil {
			return sum, fmt.Errorf("verifying /memories/%s: %w", f, err)
		}
		if sha256.Sum256(got) != sums[f] {
			bad = append(bad, "/memories/"+f)
		}
	}
	for _, d := range p.dirs {
		if fi, err := dst.Stat(ctx, d); err != nil || !fi.IsDir() {
			bad = append(bad, "/memories/"+d+"/")
		}
	}
	if len(bad) > 0 {
		return sum, fmt.Errorf("verification failed: %d entries in the target differ from the source: %s", len(bad), strings.Join(bad, ", "))
	}
	return sum, nil
}

// checkSourceExists refuses a source on the local disk that is not there,
// which opening it would create empty.
func checkSourceExists(raw string) error {
	local := raw
	if scheme, _, ok := strings.Cut(raw, ":"); ok && len(scheme) >= 2 && !strings.ContainsAny(scheme, "/.") {
		switch scheme {
		case "file", "sqlite", "file+blob":
			u, err := url.Parse(raw)
			if err != nil {
				return err
			}
			local = u.Path
		default:
			return nil
		}
	}
	if _, err := os.Stat(local); err != nil {
		return fmt.Errorf("store %s does not exist", raw)
	}
	return nil
}

// tenantLister is the optional capability of a store that can list its
// tenants (objectstore.Store has it). migrate --all-tenants needs it.
type tenantLister interface {
	Tenants(ctx context.Context) ([]string, error)
}

// listTenants returns the tenants of the multi-tenant store at raw.
func listTenants(ctx context.Context, raw string) ([]string, error) {
	scheme, _, hasScheme := strings.Cut(raw, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/.") || scheme == "file" {
		dir := raw
		if scheme == "file" {
			u, err := url.Parse(raw)
			if err != nil {
				return nil, err
			}
			dir = u.Path
		}
		return listDirTenants(dir)
	}
	var (
		s      any
		closer io.Closer
		err    error
	)
	switch scheme {
	case "sqlite":
		var u *url.URL
		if u, err = url.Parse(raw); err == nil {
			var st *sqlitestore.Store
			st, err = sqlitestore.Open(u.Path)
			s, closer = st, st
		}
	case "postgres", "postgresql":
		var st *pgstore.Store
		st, err = pgstore.Open(ctx, raw, nil)
		s, closer = st, st
	case "s3", "gs", "azblob", "mem+blob", "file+blob":
		var st *objectstore.Store
		st, err = objectstore.Open(ctx, raw)
		s, closer = st, st
	default:
		return nil, fmt.Errorf("store URL %q: no tenants to list", raw)
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	tl, ok := s.(tenantLister)
	if !ok {
		return nil, fmt.Errorf("store %s cannot list its tenants; copy them one by one with --tenant ID", raw)
	}
	ids, err := tl.Tenants(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("store %s has no tenants", raw)
	}
	return ids, nil
}

// listDirTenants lists DIR/.memtool-tenants, where a directory store keeps
// its tenants.
func listDirTenants(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, tenantsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("store %s has no tenants", dir)
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && memtool.ValidateTenant(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("store %s has no tenants", dir)
	}
	return ids, nil
}

// progress draws a progress bar on stderr when it is a terminal, and
// nothing otherwise.
type progress struct {
	w             io.Writer // nil: not a terminal
	files, copied int
	total, bytes  int64
}

func newProgress(stderr io.Writer, files int, total int64) *progress {
	p := &progress{files: files, total: total}
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		p.w = stderr
		p.draw()
	}
	return p
}

func (p *progress) add(n int64) {
	p.copied++
	p.bytes += n
	p.draw()
}

const barWidth = 30

func (p *progress) draw() {
	if p.w == nil {
		return
	}
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.bytes) / float64(p.total)
	} else if p.files > 0 {
		frac = float64(p.copied) / float64(p.files)
	}
	n := int(frac * barWidth)
	fmt.Fprintf(p.w, "\rmigrating [%s%s] %d/%d files, %s/%s ", strings.Repeat("=", n), strings.Repeat(" ", barWidth-n), p.copied, p.files, humanBytes(p.bytes), humanBytes(p.total))
}

// done ends the bar's line.
func (p *progress) done() {
	if p.w != nil {
		fmt.Fprintln(p.w)
	}
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
