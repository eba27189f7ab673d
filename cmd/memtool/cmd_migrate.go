package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/encrypt"
	"github.com/memtool/memtool/memstore"
	"github.com/memtool/memtool/storeurl"
)

// migrateLimit is the largest file migrate copies: far above what memtool
// writes (MaxFileSize), so that nothing a store holds is left behind.
const migrateLimit = 1 << 30

// migrateFlags are the flags of memtool migrate.
type migrateFlags struct {
	from, to, tenant string
	allTenants       bool
	force            bool
	toPolicy         string
	memoryOnly       bool
}

func setupMigrate(fs *flag.FlagSet) runFunc {
	var mf migrateFlags
	fs.StringVar(&mf.from, "from", "", "the store to copy (a store URL, as for --store)")
	fs.StringVar(&mf.to, "to", "", "the store to copy into")
	fs.StringVar(&mf.tenant, "tenant", "", "copy only this tenant's memory, into the same tenant of the target")
	fs.BoolVar(&mf.allTenants, "all-tenants", false, "copy every tenant of a multi-tenant store")
	fs.BoolVar(&mf.force, "force", false, "write into a target that is not empty (files of the same name are replaced)")
	fs.BoolVar(&mf.memoryOnly, "memory-only", false, "from a memtool server (https://…): copy only the files it serves, as text; its history, expiry data, encryption and policy record stay behind")
	fs.StringVar(&mf.toPolicy, "to-policy", "", "turn on the encrypt, history and expiry of this policy file in the target (keys from $MEMTOOL_KEY or $MEMTOOL_KEY_FILE)")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		return runMigrate(ctx, inv, &mf)
	}
}

func runMigrate(ctx context.Context, inv *invocation, mf *migrateFlags) int {
	from, to, tenant, allTenants, force := mf.from, mf.to, mf.tenant, mf.allTenants, mf.force
	// Store URLs may hold passwords: no message shows them. The progress
	// bar, which shows none, draws on stderr itself, if it is a terminal.
	terminal := inv.env.stderr
	env := &cliEnv{stdin: inv.env.stdin, stdout: redactingWriter{inv.env.stdout, []string{from, to}}, stderr: redactingWriter{inv.env.stderr, []string{from, to}}, getenv: inv.env.getenv}
	inv = &invocation{cmd: inv.cmd, env: env, args: inv.args}
	switch {
	case from == "" || to == "":
		return inv.fail(exitUsage, "both --from and --to are needed")
	case tenant != "" && allTenants:
		return inv.fail(exitUsage, "--tenant and --all-tenants exclude each other")
	case storeurl.InMemory(to):
		return inv.fail(exitUsage, "--to %s: that store is in memory, gone when memtool exits; the copy would be lost", to)
	case storeurl.InMemory(from):
		return inv.fail(exitUsage, "--from %s: that store is in memory, a new and empty one, gone when memtool exits; there is nothing to copy", from)
	case from == to:
		return inv.fail(exitUsage, "--from and --to are the same store")
	case storeurl.Server(from) && !mf.memoryOnly:
		// A server answers with its files' text and keeps its versions,
		// access index, trash and policy record to itself.
		return inv.fail(exitUsage, "--from %s is a memtool server: it serves the text of its files only, so a copy from it would lose the history versions, the access index and trash, the encryption and the policy record of the store it serves; migrate that store where the server runs (--from naming it), or add --memory-only to copy just the files", storeurl.Redact(from))
	case mf.memoryOnly && !storeurl.Server(from):
		return inv.fail(exitUsage, "--memory-only is for a --from that is a memtool server (https://…); migrate copies any other store whole")
	case overlap(from, to):
		return inv.fail(exitUsage, "--from and --to overlap: one store's file, directory or keys are, or are inside, the other's; the copy would change the source")
	}
	var turnOn *policyFile
	var err error
	if mf.toPolicy != "" {
		if turnOn, err = loadPolicy(mf.toPolicy); err != nil {
			return inv.fail(exitUsage, "--to-policy: %v", err)
		}
	}

	tenants := []string{tenant}
	if allTenants {
		if tenants, err = listTenants(ctx, from); err == nil && len(tenants) == 0 {
			err = fmt.Errorf("store %s has no tenants", from)
		}
		if err != nil {
			return inv.fail(exitStore, "--from: %v", err)
		}
		if err := checkTenantsDir(from, "migrate --all-tenants would leave %s behind"); err != nil {
			return inv.fail(exitFailed, "the source %v", err)
		}
	}
	// One tenant's stores are open at a time, each closed before the next
	// is opened: any number of tenants is copied within a few open files.
	pairs := make([]*migration, len(tenants))
	for i, id := range tenants {
		pairs[i] = &migration{tenant: id}
	}
	defer func() {
		for _, p := range pairs {
			p.close()
		}
	}()

	// Refuse before anything is written: what the source holds before the
	// target is opened (which may create it, or claim its tenancy).
	for _, p := range pairs {
		if err := p.openSource(ctx, from); err != nil {
			return inv.fail(exitStore, "--from: %v", err)
		}
		code := p.prepareSource(ctx, env, from, to, turnOn)
		p.close()
		if code != exitOK {
			return code
		}
	}
	// A tenant of the target that the source has not is something the
	// target holds, which prepareTarget (one tenant at a time) cannot see:
	// refused, or with --force left there and named in the summary.
	var other []string
	if allTenants {
		if ids, err := listTenants(ctx, to); err == nil {
			for _, id := range ids {
				if !slices.Contains(tenants, id) {
					other = append(other, id)
				}
			}
			if len(other) > 0 && !force {
				return inv.fail(exitFailed, "the target is not empty: it holds %s that the source has not (%s); add --force to copy into it anyway", plural(len(other), "tenant"), strings.Join(other, ", "))
			}
		}
	}
	// The targets that exist are checked first, and only then are the
	// missing ones (a new store, a new tenant) created: a refusal of one
	// tenant's target claims no other tenant in the target.
	checked := make([]bool, len(pairs))
	for _, create := range []bool{false, true} {
		for i, p := range pairs {
			if checked[i] {
				continue
			}
			if err := p.openSource(ctx, from); err != nil {
				return inv.fail(exitStore, "--from: %v", err)
			}
			err := p.openTarget(ctx, to, create)
			if !create && errors.Is(err, fs.ErrNotExist) {
				p.close()
				continue
			}
			if err != nil {
				return inv.fail(exitStore, "--to: %v", err)
			}
			code := p.prepareTarget(ctx, env, force)
			p.close()
			if code != exitOK {
				return code
			}
			checked[i] = true
		}
	}
	var total plan
	for _, p := range pairs {
		total.files = append(total.files, p.plan.files...)
		total.bytes += p.plan.bytes
	}
	prog := newProgress(terminal, len(total.files), total.bytes)
	var sum migrateSummary
	var kept []string
	if force {
		for _, id := range other {
			kept = append(kept, "tenant "+id)
		}
	}
	for _, p := range pairs {
		err := p.openSource(ctx, from)
		if err != nil {
			prog.done()
			return inv.fail(exitStore, "--from: %v", err)
		}
		if err = p.openTarget(ctx, to, true); err == nil {
			err = p.layer()
		}
		if err == nil {
			err = keepPolicy(ctx, p.dst, p.record, p.tenant)
		}
		if err != nil {
			prog.done()
			return inv.fail(exitStore, "--to: store %s: %v", storeLabel(to, p.tenant), err)
		}
		s, err := copyStore(ctx, p.src, p.dstLayer, p.plan, force, prog)
		sum.add(s)
		if err != nil {
			prog.done()
			fmt.Fprintf(env.stderr, "memtool migrate%s: %v\n", p.label(), err)
			return exitFailed
		}
		if force {
			kept = append(kept, p.notInSource(ctx)...)
		}
		p.close()
	}
	prog.done()
	what := ""
	if allTenants {
		what = " of " + plural(len(pairs), "tenant")
	} else if tenant != "" {
		what = fmt.Sprintf(" of tenant %s", tenant)
	}
	var policies []string
	for _, p := range pairs {
		for _, name := range p.record.names() {
			if !slices.Contains(policies, name) {
				policies = append(policies, name)
			}
		}
	}
	with := ""
	if len(policies) > 0 {
		with = fmt.Sprintf(", with the policies %s and %s of their data", strings.Join(policies, ", "), plural(sum.policy, "entry", "entries"))
	}
	also := ""
	if len(kept) > 0 {
		n := len(kept)
		if n > 10 {
			kept = append(kept[:10], "...")
		}
		also = fmt.Sprintf("; the target also holds %s the source has not, left there (--force replaces, it does not delete): %s", plural(n, "entry", "entries"), strings.Join(kept, ", "))
	}
	said, keysErr := migrateKeys(ctx, from, to, tenant, allTenants)
	also += said
	if mf.memoryOnly {
		also += "; only the files and directories the server serves were copied, as text: the server's policies and their data (history versions, the access index and trash, encryption, the policy record) were not"
	}
	_, err = fmt.Fprintf(env.stdout, "copied %s (%s) and %s%s%s from %s to %s; every file verified by SHA-256, read back from the target%s\n",
		plural(sum.files, "file"), humanBytes(sum.bytes), plural(sum.dirs, "directory", "directories"), with, what, from, to, also)
	if err != nil {
		return exitBrokenIO
	}
	if keysErr != nil {
		fmt.Fprintf(env.stderr, "memtool migrate: the memory was copied, the API keys of memtool serve not all: %v; once that is mended, run it again with --force to finish\n", keysErr)
		return exitFailed
	}
	return exitOK
}

// migration is one source memory and its target. Its stores are open
// (openSource, openTarget) only while it is checked or copied.
type migration struct {
	tenant   string
	src, dst memtool.Store
	closers  []io.Closer
	dstLayer memtool.Store // where the files are written: dst, or dst encrypted (set by layer)

	// Set by prepareSource, kept when the stores are closed:
	plan   *plan
	record policyRecord  // what the target records
	keys   []encrypt.Key // the keys to encrypt the copy with, if --to-policy turns encryption on
}

func (m *migration) label() string {
	if m.tenant == "" {
		return ""
	}
	return " (tenant " + m.tenant + ")"
}

// close closes the stores of m that are open.
func (m *migration) close() {
	for _, c := range m.closers {
		c.Close()
	}
	m.closers, m.src, m.dst, m.dstLayer = nil, nil, nil, nil
}

// notInSource returns the entries of the target (as walkMemory lists
// them, shown as messages show names, with the tenant) that the plan has
// not: what a copy with --force left of what the target held. A target
// that cannot be walked gives none.
func (m *migration) notInSource(ctx context.Context) []string {
	planned := make(map[string]bool, len(m.plan.dirs)+len(m.plan.files))
	for _, n := range append(slices.Clip(m.plan.dirs), m.plan.files...) {
		planned[n] = true
	}
	var out []string
	walkMemory(ctx, m.dst, func(name string, fi memtool.FileInfo) error {
		if !planned[name] {
			shown := shownName(name)
			if m.tenant != "" {
				shown = m.tenant + ":" + shown
			}
			out = append(out, shown)
		}
		return nil
	})
	return out
}

// fail says why the migration is refused, on stderr, and returns code.
func (m *migration) fail(env *cliEnv, code int, format string, args ...any) int {
	fmt.Fprintf(env.stderr, "memtool migrate"+m.label()+": "+format+"\n", args...)
	return code
}

// prepareSource checks that the migration can carry everything the source
// holds, and plans it, writing nothing and before the target is opened:
// turnOn (the --to-policy file, or nil) may add policies to the source's
// but not drop any. It returns an exit status, having said why on stderr
// if it is not exitOK.
func (m *migration) prepareSource(ctx context.Context, env *cliEnv, from, to string, turnOn *policyFile) int {
	fail := func(code int, format string, args ...any) int { return m.fail(env, code, format, args...) }
	srcRec, _, srcFound, err := readRecord(ctx, m.src)
	if err != nil {
		return fail(exitStore, "--from: %v", err)
	}
	if err := checkDiskNames(from, m.tenant); err != nil {
		return fail(exitFailed, "the source %v", err)
	}
	if m.plan, err = planCopy(ctx, m.src); err != nil {
		return fail(exitFailed, "reading the source: %v", err)
	}
	if bad := unfitNames(to, m.tenant, m.plan); len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("and %d more", len(bad)-10))
		}
		return fail(exitFailed, "the target, %s, cannot hold %s of the source under the same name, so migrate copies nothing: %s", storeurl.Kind(to), plural(len(bad), "entry", "entries"), strings.Join(bad, ", "))
	}
	m.record = srcRec
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
			if m.keys, err = encrypt.LoadKeys(env.getenv, "MEMTOOL_KEY", "MEMTOOL_KEY_FILE"); err != nil {
				return fail(exitUsage, "--to-policy encrypts: %v", err)
			}
			// The keys are checked now (a duplicate ID), over a store of
			// no consequence: the target is not open yet.
			if _, err = encrypt.New(memstore.New(), m.keys, &encrypt.Options{Tenant: m.tenant}); err != nil {
				return fail(exitUsage, "--to-policy encrypts: %v", err)
			}
		}
	}
	return exitOK
}

// prepareTarget checks, writing nothing, that the opened target may take
// the copy: it must be empty (unless force, and then hold no policy data
// but the source's if the source has some), and record no policy that
// the copy's record (m.record) lacks.
func (m *migration) prepareTarget(ctx context.Context, env *cliEnv, force bool) int {
	fail := func(code int, format string, args ...any) int { return m.fail(env, code, format, args...) }
	if err := m.layer(); err != nil {
		return fail(exitUsage, "--to-policy encrypts: %v", err)
	}
	entries, err := (&wholeView{m.dst}).ReadDir(ctx, "")
	if err != nil {
		return fail(exitStore, "--to: %v", err)
	}
	if len(entries) > 0 && !force {
		return fail(exitFailed, "the target is not empty (%s); add --force to copy into it anyway", plural(len(entries), "entry", "entries"))
	}
	// What keepPolicy will refuse, refused before any tenant is copied.
	if err := checkPolicy(ctx, m.dst, m.record, m.tenant, false); err != nil {
		return fail(exitStore, "--to: %v", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, ".memtool") || m.plan.policy == 0 {
			continue
		}
		// What an interrupted copy of this source left is completed (as
		// the README tells: rerun with --force); anything else would
		// merge two stores' policy data.
		foreign, err := m.foreignPolicyData(ctx, e.Name)
		if err != nil {
			return fail(exitStore, "--to: %v", err)
		}
		if foreign != "" {
			return fail(exitFailed, "the target holds policy data (%s) that is not the source's (%s differs or is not in the source), and so does the source: migrate does not merge two stores' histories, access indexes or trash; --force only completes an interrupted copy of the same source", e.Name, foreign)
		}
	}
	return exitOK
}

// foreignPolicyData returns the first entry under name, policy data in
// the target, that the source does not hold as it is (a directory that
// is not one in the source, a file whose content differs), or "" if
// every entry is the source's: what an interrupted copy of the source
// left behind.
func (m *migration) foreignPolicyData(ctx context.Context, name string) (string, error) {
	var foreign string
	err := memtool.Walk(ctx, m.dstLayer, name, func(n string, fi memtool.FileInfo) error {
		sfi, err := m.src.Stat(ctx, n)
		switch {
		case errors.Is(err, memtool.ErrNotExist):
		case err != nil:
			return err
		case fi.IsDir() && sfi.IsDir():
			return nil
		case fi.IsRegular() && sfi.IsRegular():
			got, err := m.dstLayer.ReadFile(ctx, n, migrateLimit)
			if err != nil {
				return err
			}
			want, err := m.src.ReadFile(ctx, n, migrateLimit)
			if err != nil && !errors.Is(err, memtool.ErrNotExist) {
				return err
			}
			if err == nil && bytes.Equal(got, want) {
				return nil
			}
		}
		foreign = n
		return errStopWalk
	})
	if errors.Is(err, errStopWalk) {
		err = nil
	}
	return foreign, err
}
