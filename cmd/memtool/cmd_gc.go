package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	versions "github.com/memtool/memtool/history"
)

const gcAbout = `Needs the expiry policy ("expiry": true in --policy FILE or $MEMTOOL_POLICY):
only with it is every use of a file recorded, and the files used are kept.
With the history policy alone, gc expires nothing and drops the versions
past its max_age. A gc refused for want of either changes nothing;
--dry-run and --reset-index run without them. With the audit policy, the
log records each move to the trash and each purge.`

const restoreAbout = `The file is written back through every policy in force, as any other write:
the audit log records it, limits and secrets may refuse it (it then stays in
the trash), expiry records it as used. Its copy in the trash is removed only
after that write.`

func setupGC(fs *flag.FlagSet) runFunc {
	unusedFor := fs.String("unused-for", "", "expire files not read or written for this long (30d, 12h, 90m)")
	grace := fs.String("grace", "7d", "keep expired files restorable this long, then purge them")
	dryRun := fs.Bool("dry-run", false, "list what would expire or be purged, change nothing")
	resetIndex := fs.Bool("reset-index", false, "only remove an access index that cannot be read (damaged, or past 64 MiB), so uses are recorded again")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if *resetIndex {
			if *unusedFor != "" || *dryRun {
				return inv.fail(exitUsage, "--reset-index takes no other flag")
			}
			return runResetIndex(ctx, inv)
		}
		opts := expiry.CollectOptions{DryRun: *dryRun}
		var err error
		if opts.UnusedFor, err = parseDays(*unusedFor); err != nil || opts.UnusedFor <= 0 {
			return inv.fail(exitUsage, "--unused-for %q: want a duration such as 30d, 12h or 90m", *unusedFor)
		}
		if opts.UnusedFor < expiry.DefaultResolution {
			// Every memtool process records accesses at the default resolution.
			res := shortDuration(expiry.DefaultResolution)
			return inv.fail(exitUsage, "--unused-for %s is below the resolution of the access index (%s): a file used within the last %s may show an older access, so gc could expire it; give %s or more",
				*unusedFor, res, res, res)
		}
		if opts.Grace, err = parseDays(*grace); err != nil || opts.Grace <= 0 {
			return inv.fail(exitUsage, "--grace %q: want a duration such as 7d", *grace)
		}
		return runGC(ctx, inv, opts)
	}
}

// errGCNeedsExpiry is why gc refuses a store opened with neither the
// expiry nor the history policy.
const errGCNeedsExpiry = `gc needs the expiry policy ("expiry": true in the policy, --policy FILE or $MEMTOOL_POLICY); without it no use is recorded and gc would expire files in use (with the history policy alone, gc drops aged versions and expires nothing)`

// runGC expires the files of a store not used for a while (package
// expiry): they move to a hidden trash, restorable until the grace period
// ends. It refuses unless the expiry policy is in force: the access index
// tells which files are in use only if every process records its uses,
// and one run without it would write an index that says every file was
// last used then, which the next run takes as true. (A store that records
// the policy is opened only with it.) With the history policy alone it
// expires nothing and drops the aged versions. A dry run, which changes
// nothing, runs without either, and never records the policy. No gc
// creates the store or the tenant: one that is not there (a mistyped
// --store) has nothing to collect, and is an error.
func runGC(ctx context.Context, inv *invocation, opts expiry.CollectOptions) int {
	// A gc to be refused records no policy.
	expiring, aging := gcPolicies(inv)
	run := !opts.DryRun && (expiring || aging)
	inv.sf.noRecord = !run
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	if !opts.DryRun && (!run || !st.expiry && st.history == nil) {
		return inv.fail(exitUsage, "%s", errGCNeedsExpiry)
	}
	where := st.gcStore // audited: gc moves and removes files
	if opts.DryRun {
		where = st.belowExpiry
	}
	var rep expiry.Report
	var err error
	var looked []string // what was looked for, for the answer when nothing was found
	if opts.DryRun || st.expiry {
		rep, err = expiry.Collect(ctx, where, opts)
		looked = append(looked, "no file unused for "+dayDuration(opts.UnusedFor), "no trash older than "+dayDuration(opts.Grace))
	}
	verb, purged := "expired", "purged"
	if opts.DryRun {
		verb, purged = "would expire", "would purge"
	}
	var out strings.Builder
	for _, e := range rep.Expired {
		fmt.Fprintf(&out, "%s %s (last used %s)\n", verb, e.Path, e.LastUsed.Format(time.DateOnly))
	}
	for _, p := range rep.Purged {
		for _, path := range p.Paths {
			fmt.Fprintf(&out, "%s %s (expired %s)\n", purged, path, p.Expired.Format(time.DateOnly))
		}
	}
	if hs, ok := st.history.(*versions.Store); ok && err == nil {
		// The versions past the history policy's max_age that no change
		// of their file dropped: those of deleted files, above all.
		var pruned []versions.Pruned
		pruned, err = hs.PruneAged(ctx, opts.DryRun)
		dropped := "dropped"
		if opts.DryRun {
			dropped = "would drop"
		}
		for _, p := range pruned {
			of := cmp.Or(p.Path, "a file whose path history does not know") // its record of the path lost or damaged
			fmt.Fprintf(&out, "%s version %d of %s (from %s, older than %s)\n", dropped, p.N, of, p.Time.Format(time.DateOnly), dayDuration(hs.MaxAge()))
		}
		looked = append(looked, "no version older than "+dayDuration(hs.MaxAge()))
	}
	if _, werr := fmt.Fprint(inv.env.stdout, out.String()); werr != nil {
		return exitBrokenIO
	}
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	if out.Len() == 0 {
		what := "nothing to expire or purge"
		if opts.DryRun {
			what = "nothing would expire or be purged"
		}
		return inv.fail(exitOK, "%s: %s", what, strings.Join(looked, ", "))
	}
	return exitOK
}

// runResetIndex removes an access index that cannot be read; a readable
// one stays.
func runResetIndex(ctx context.Context, inv *invocation) int {
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	switch err := expiry.ResetIndex(ctx, st.gcStore); {
	case errors.Is(err, expiry.ErrIndexReadable):
		return inv.fail(exitFailed, "the access index reads as it should; it was left as it is")
	case err != nil:
		return inv.fail(exitFailed, "%v", err)
	}
	return inv.fail(exitOK, "the access index is gone or was not there; uses are recorded again, and every file counts as used at the next gc")
}

func setupRestore(fs *flag.FlagSet) runFunc {
	list := fs.Bool("list", false, "list the files in the trash")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if *list == (len(inv.args) == 1) || len(inv.args) > 1 {
			return inv.fail(exitUsage, "give one PATH, or --list")
		}
		if *list {
			return listTrash(ctx, inv)
		}
		return runRestore(ctx, inv, inv.args[0])
	}
}

// listTrash lists what gc moved to the trash; it never creates the store,
// nor records a policy in it.
func listTrash(ctx context.Context, inv *invocation) int {
	inv.sf.noRecord = true
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	trash, err := expiry.Trash(ctx, st.belowExpiry)
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	if len(trash) == 0 {
		return inv.fail(exitOK, "the trash is empty")
	}
	for _, t := range trash {
		if _, err := fmt.Fprintf(inv.env.stdout, "%s (expired %s)\n", t.Path, t.Expired.Format(time.DateTime)); err != nil {
			return exitBrokenIO
		}
	}
	return exitOK
}

// runRestore brings the most recently expired file at name back from the
// trash. It writes the file through the whole stack, as any other write:
// the audit log records it, the limits and secrets policies may refuse it
// (it then stays in the trash), the expiry policy records it as used, the
// history policy keeps what it is written over (nothing: it is created).
// Only once that write is made is its copy in the trash removed, so that
// a crash in between leaves the file in both places, never in neither.
func runRestore(ctx context.Context, inv *invocation, name string) int {
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	src, t, err := expiry.Find(ctx, st.belowExpiry, name)
	var pe *memtool.PathError
	switch {
	case errors.As(err, &pe):
		return inv.fail(exitUsage, "%s", pe.Reason)
	case errors.Is(err, expiry.ErrNotInTrash):
		return inv.fail(exitFailed, "%s is not in the trash (see memtool restore --list)", name)
	case err != nil:
		return inv.fail(exitFailed, "%v", err)
	}
	n, _, _ := memtool.CleanPath(name)
	data, err := st.gcStore.ReadFile(ctx, src, math.MaxInt64)
	if err != nil {
		return inv.fail(exitFailed, "reading %s from the trash: %v", name, err)
	}
	created, err := memtool.MkdirAll(ctx, st.top, path.Dir(n))
	if err == nil {
		err = st.top.WriteFile(ctx, n, data, memtool.CreateOnly)
	}
	if err != nil {
		for i := len(created) - 1; i >= 0; i-- {
			st.top.Remove(context.WithoutCancel(ctx), created[i])
		}
		if errors.Is(err, memtool.ErrExist) {
			return inv.fail(exitFailed, "%s exists again; rename or delete it first", name)
		}
		return inv.fail(exitFailed, "%s stays in the trash: %v", name, err)
	}
	// A policy may have changed what was written (the secrets policy
	// redacts): the copy as it was then stays, until gc purges its batch.
	if got, err := st.belowExpiry.ReadFile(ctx, n, math.MaxInt64); err != nil || !bytes.Equal(got, data) {
		fmt.Fprintf(inv.env.stderr, "memtool restore: %s is back as the policies wrote it, which is not as it was in the trash; its copy there stays until gc purges its batch\n", name)
	} else if err := st.gcStore.Remove(context.WithoutCancel(ctx), src); err != nil && !errors.Is(err, memtool.ErrNotExist) {
		fmt.Fprintf(inv.env.stderr, "memtool restore: %s is back, but its copy in the trash could not be removed (%v); gc purges it with its batch\n", name, err)
	}
	return writeOut(inv.env, fmt.Sprintf("restored %s (expired %s)\n", t.Path, t.Expired.Format(time.DateTime)))
}

// gcPolicies reports whether the policy of --policy or $MEMTOOL_POLICY
// turns expiry on, and history. A policy that cannot be read counts as
// none: opening the store says what is wrong with it.
func gcPolicies(inv *invocation) (expiring, aging bool) {
	name := cmp.Or(inv.sf.policy, inv.env.getenv("MEMTOOL_POLICY"))
	if name == "" {
		return false, false
	}
	p, err := loadPolicy(name)
	return err == nil && p.Expiry, err == nil && p.History != nil
}

// shortDuration writes d without zero minutes and seconds: 1h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// dayDuration writes d as parseDays reads it: whole days as 30d.
func dayDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.Itoa(int(d/day)) + "d"
	}
	return shortDuration(d)
}

// parseDays reads a Go duration that may also count days: 30d, 1d12h.
// One longer than a duration holds (about 292 years) is an error, as
// time.ParseDuration makes it, not another duration wrapped around.
func parseDays(s string) (time.Duration, error) {
	whole := s
	var days time.Duration
	if d, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || int64(n) > math.MaxInt64/int64(24*time.Hour) {
			return 0, fmt.Errorf("bad duration %q", whole)
		}
		days, s = time.Duration(n)*24*time.Hour, rest
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d > 0 && days > math.MaxInt64-d {
		return 0, fmt.Errorf("bad duration %q: too long", whole)
	}
	return days + d, nil
}
