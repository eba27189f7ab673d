package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
	versions "github.com/memtool/memtool/history"
)

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

// runGC expires the files of a store not used for a while (package
// expiry): they move to a hidden trash, restorable until the grace period
// ends. A dry run never creates the store, nor records its policy.
func runGC(ctx context.Context, inv *invocation, opts expiry.CollectOptions) int {
	inv.sf.noRecord = opts.DryRun
	st, closer, code := openStackOrFail(ctx, inv, !opts.DryRun)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	rep, err := expiry.Collect(ctx, st.belowExpiry, opts)
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
	versionsToo := ""
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
			fmt.Fprintf(&out, "%s version %d of %s (from %s, older than %s)\n", dropped, p.N, p.Path, p.Time.Format(time.DateOnly), dayDuration(hs.MaxAge()))
		}
		versionsToo = fmt.Sprintf(", no version older than %s", dayDuration(hs.MaxAge()))
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
		return inv.fail(exitOK, "%s: no file unused for %s, no trash older than %s%s", what, dayDuration(opts.UnusedFor), dayDuration(opts.Grace), versionsToo)
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
	switch err := expiry.ResetIndex(ctx, st.belowExpiry); {
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

// runRestore brings an expired file back from the trash.
func runRestore(ctx context.Context, inv *invocation, name string) int {
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	t, err := expiry.Restore(ctx, st.belowExpiry, name, time.Now())
	var pe *memtool.PathError
	switch {
	case errors.As(err, &pe):
		return inv.fail(exitUsage, "%s", pe.Reason)
	case errors.Is(err, expiry.ErrNotInTrash):
		return inv.fail(exitFailed, "%s is not in the trash (see memtool restore --list)", name)
	case errors.Is(err, memtool.ErrExist):
		return inv.fail(exitFailed, "%s exists again; rename or delete it first", name)
	case err != nil:
		return inv.fail(exitFailed, "%v", err)
	}
	return writeOut(inv.env, fmt.Sprintf("restored %s (expired %s)\n", t.Path, t.Expired.Format(time.DateTime)))
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
func parseDays(s string) (time.Duration, error) {
	var days time.Duration
	if d, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		days, s = time.Duration(n)*24*time.Hour, rest
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	return days + d, err
}
