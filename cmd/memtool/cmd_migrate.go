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
	"path/filepath"
	"slices"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
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
		toPolicy         string
	)
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: memtool migrate --from URL --to URL [--tenant ID | --all-tenants] [--force] [--to-policy FILE]\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&from, "from", "", "the store to copy (a store URL, as for --store)")
	fs.StringVar(&to, "to", "", "the store to copy into")
	fs.StringVar(&tenant, "tenant", "", "copy only this tenant's memory, into the same tenant of the target")
	fs.BoolVar(&allTenants, "all-tenants", false, "copy every tenant of a multi-tenant store")
	fs.BoolVar(&force, "force", false, "write into a target that is not empty (files of the same name are replaced)")
	fs.StringVar(&toPolicy, "to-policy", "", "turn on the encrypt, history and expiry of this policy file in the target (keys from $MEMTOOL_KEY or $MEMTOOL_KEY_FILE)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	// Store URLs may hold passwords: no message shows them. The progress
	// bar, which shows none, draws on stderr itself, if it is a terminal.
	terminal := env.stderr
	env = &cliEnv{stdin: env.stdin, stdout: redactingWriter{env.stdout, []string{from, to}}, stderr: redactingWriter{env.stderr, []string{from, to}}, getenv: env.getenv}
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
	var turnOn *policyFile
	if toPolicy != "" {
		if turnOn, err = loadPolicy(toPolicy); err != nil {
			fmt.Fprintf(env.stderr, "memtool migrate: --to-policy: %v\n", err)
			return exitUsage
		}
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
	var pairs []*migration
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
		pairs = append(pairs, &migration{tenant: id, src: src, dst: dst, closers: []io.Closer{srcCloser, dstCloser}})
	}

	// Refuse before anything is written.
	for _, p := range pairs {
		if code := p.prepare(ctx, env, from, turnOn, force); code != exitOK {
			return code
		}
	}
	var total plan
	for _, p := range pairs {
		total.files = append(total.files, p.plan.files...)
		total.bytes += p.plan.bytes
	}
	prog := newProgress(terminal, len(total.files), total.bytes)
	var sum migrateSummary
	for _, p := range pairs {
		if err := keepPolicy(ctx, p.dst, p.record, p.tenant); err != nil {
			prog.done()
			fmt.Fprintf(env.stderr, "memtool migrate: --to: store %s: %v\n", storeLabel(to, p.tenant), err)
			return exitStore
		}
		s, err := copyStore(ctx, p.src, p.dstLayer, p.plan, force, prog)
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
	var kept []string
	for _, p := range pairs {
		for _, name := range p.record.names() {
			if !slices.Contains(kept, name) {
				kept = append(kept, name)
			}
		}
	}
	with := ""
	if len(kept) > 0 {
		with = fmt.Sprintf(", with the policies %s and %d entries of their data", strings.Join(kept, ", "), sum.policy)
	}
	_, err = fmt.Fprintf(env.stdout, "copied %d files (%s) and %d directories%s%s from %s to %s; every file verified by SHA-256, read back from the target\n",
		sum.files, humanBytes(sum.bytes), sum.dirs, with, what, from, to)
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

	// Set by prepare:
	plan     *plan
	record   policyRecord  // what the target records
	dstLayer memtool.Store // where the files are written: dst, or dst encrypted
}

func (m *migration) label() string {
	if m.tenant == "" {
		return ""
	}
	return " (tenant " + m.tenant + ")"
}

func (m *migration) close() {
	for _, c := range m.closers {
		c.Close()
	}
}

// prepare checks that the migration can carry everything the source
// holds, and plans it, writing nothing: the target must be empty (unless
// force, and then hold no policy data if the source does), and turnOn (the
// --to-policy file, or nil) may add policies to the source's but not drop
// any. It returns an exit status, having said why on stderr if it is not
// exitOK.
func (m *migration) prepare(ctx context.Context, env *cliEnv, from string, turnOn *policyFile, force bool) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(env.stderr, "memtool migrate"+m.label()+": "+format+"\n", args...)
		return code
	}
	srcRec, _, srcFound, err := readRecord(ctx, m.src)
	if err != nil {
		return fail(exitStore, "--from: %v", err)
	}
	if err := checkDiskNames(from, m.tenant); err != nil {
		return fail(exitFailed, "the source %v; migrate cannot carry it", err)
	}
	if m.plan, err = planCopy(ctx, m.src); err != nil {
		return fail(exitFailed, "reading the source: %v", err)
	}
	m.record, m.dstLayer = srcRec, m.dst
	if turnOn != nil {
		// A store encrypted before records existed must get its record
		// first, or the copy would record policies without encryption.
		if !srcFound {
			if name, _ := findFile(ctx, m.src, m.tenant, false, true); name != "" {
				return fail(exitFailed, "the source's files are encrypted (such as %s), but it has no policy record; open it once with its encryption policy, then migrate", shownName(name))
			}
		}
		want := turnOn.record()
		if miss := srcRec.missing(want); len(miss) > 0 {
			return fail(exitUsage, "the source records policies that --to-policy lacks, and migrate does not drop a policy: %s", strings.Join(miss, "; "))
		}
		m.record = srcRec.union(want)
		if want.Encrypt && !srcRec.Encrypt {
			// The source's files are copied through encryption; one that
			// is encrypted already (a store from before records) is not
			// encrypted twice.
			if name, err := findFile(ctx, m.src, m.tenant, false, false); err != nil {
				return fail(exitFailed, "reading the source: %v", err)
			} else if name != "" {
				return fail(exitFailed, "the source's file %s is encrypted already, but the source records no encryption", shownName(name))
			}
			keys, err := encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE")
			if err != nil {
				return fail(exitUsage, "--to-policy encrypts: %v", err)
			}
			if m.dstLayer, err = encrypt.New(m.dst, keys, &encrypt.Options{Tenant: m.tenant}); err != nil {
				return fail(exitUsage, "--to-policy encrypts: %v", err)
			}
		}
	}
	entries, err := (&wholeView{m.dst}).ReadDir(ctx, "")
	if err != nil {
		return fail(exitStore, "--to: %v", err)
	}
	if len(entries) > 0 && !force {
		return fail(exitFailed, "the target is not empty (%d entries); add --force to copy into it anyway", len(entries))
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".memtool") && m.plan.policy > 0 {
			return fail(exitFailed, "the target holds policy data (%s), and so does the source: migrate does not merge two stores' histories, access indexes or trash", e.Name)
		}
	}
	return exitOK
}

// names lists the recorded policies.
func (r policyRecord) names() []string {
	var out []string
	for _, p := range []struct {
		on   bool
		name string
	}{{r.Encrypt, "encrypt"}, {r.History, "history"}, {r.Expiry, "expiry"}} {
		if p.on {
			out = append(out, p.name)
		}
	}
	return out
}

// plan is what a source holds (see walkMemory): its directories (parents
// before children) and its files, and the files' total size; policy
// counts the entries of policies' data among them.
type plan struct {
	dirs   []string
	files  []string
	bytes  int64
	policy int
}

func planCopy(ctx context.Context, src memtool.Store) (*plan, error) {
	p := &plan{}
	err := walkMemory(ctx, src, func(name string, e memtool.FileInfo) error {
		if strings.HasPrefix(name, ".memtool") {
			p.policy++
		}
		switch {
		case e.IsDir():
			p.dirs = append(p.dirs, name)
		case e.IsRegular():
			p.files = append(p.files, name)
			p.bytes += e.Size
		default:
			return fmt.Errorf("%s is neither a file nor a directory; memtool cannot copy it", shownName(name))
		}
		return nil
	})
	return p, err
}

type migrateSummary struct {
	files, dirs, policy int
	bytes               int64
}

func (s *migrateSummary) add(o migrateSummary) {
	s.files += o.files
	s.dirs += o.dirs
	s.policy += o.policy
	s.bytes += o.bytes
}

// copyStore copies the plan from src to dst, then reads every file back
// from dst and compares its SHA-256 with the source's. Without force it
// creates only (a file that appeared in the target meanwhile is an error);
// with force it replaces files and keeps directories that are there. The
// summary counts the memory's files and directories, and the entries of
// policies' data apart.
func copyStore(ctx context.Context, src, dst memtool.Store, p *plan, force bool, prog *progress) (migrateSummary, error) {
	var sum migrateSummary
	tally := func(name string, file bool, size int64) {
		switch {
		case strings.HasPrefix(name, ".memtool"):
			sum.policy++
		case file:
			sum.files++
			sum.bytes += size
		default:
			sum.dirs++
		}
	}
	for _, d := range p.dirs {
		err := dst.Mkdir(ctx, d)
		if force && errors.Is(err, memtool.ErrExist) {
			if fi, serr := dst.Stat(ctx, d); serr == nil && fi.IsDir() {
				err = nil
			}
		}
		if err != nil {
			return sum, fmt.Errorf("directory %s: %w", shownName(d), err)
		}
		tally(d, false, 0)
	}
	mode := memtool.CreateOnly
	if force {
		mode = memtool.Replace
	}
	sums := make(map[string][sha256.Size]byte, len(p.files))
	for _, f := range p.files {
		data, err := src.ReadFile(ctx, f, migrateLimit)
		if err != nil {
			return sum, fmt.Errorf("reading %s: %w", shownName(f), err)
		}
		if err := dst.WriteFile(ctx, f, data, mode); err != nil {
			return sum, fmt.Errorf("writing %s: %w", shownName(f), err)
		}
		sums[f] = sha256.Sum256(data)
		tally(f, true, int64(len(data)))
		prog.add(int64(len(data)))
	}
	var bad []string
	for _, f := range p.files {
		got, err := dst.ReadFile(ctx, f, migrateLimit)
		if err != nil {
			return sum, fmt.Errorf("verifying %s: %w", shownName(f), err)
		}
		if sha256.Sum256(got) != sums[f] {
			bad = append(bad, shownName(f))
		}
	}
	for _, d := range p.dirs {
		if fi, err := dst.Stat(ctx, d); err != nil || !fi.IsDir() {
			bad = append(bad, shownName(d)+"/")
		}
	}
	if len(bad) > 0 {
		return sum, fmt.Errorf("verification failed: %d entries in the target differ from the source: %s", len(bad), strings.Join(bad, ", "))
	}
	return sum, nil
}

// checkDiskNames refuses a directory store whose directory holds, beside
// the memory, an entry of a policy this memtool does not know (the file
// store lists no name starting with ".memtool", so walkMemory cannot see
// it). Other stores are checked by walkMemory, as far as they list such
// names.
func checkDiskNames(raw, tenant string) error {
	dir, ok := localDir(raw)
	if !ok {
		return nil
	}
	if tenant != "" {
		dir = filepath.Join(dir, tenantsDir, tenant)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // opening the store has already told what is wrong
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".memtool") && !storeOwnName(n) && n != recordName && !slices.Contains(policyData, n) {
			return fmt.Errorf("holds %s, which this memtool does not know", n)
		}
	}
	return nil
}

// localDir returns the directory of a directory store's URL.
func localDir(raw string) (string, bool) {
	scheme, _, hasScheme := strings.Cut(raw, ":")
	if !hasScheme || len(scheme) < 2 || strings.ContainsAny(scheme, "/.") {
		return raw, true
	}
	if scheme == "file" {
		if u, err := url.Parse(raw); err == nil {
			return u.Path, true
		}
	}
	return "", false
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

// listTenants returns the tenants of the multi-tenant store at raw.
func listTenants(ctx context.Context, raw string) ([]string, error) {
	if dir, ok := localDir(raw); ok {
		return listDirTenants(dir)
	}
	scheme, _, _ := strings.Cut(raw, ":")
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
	tl, ok := s.(memtool.TenantLister)
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
