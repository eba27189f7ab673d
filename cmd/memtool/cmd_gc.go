package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/expiry"
)

// runGC expires the files of a store not used for a while (package
// expiry): they move to a hidden trash, restorable until the grace period
// ends.
func runGC(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var unusedFor, grace string
	var dryRun bool
	fs := newFlagSet("gc", "gc [--store URL] --unused-for 30d [--grace 7d] [--dry-run]", env, &sf)
	fs.StringVar(&unusedFor, "unused-for", "", "expire files not read or written for this long (30d, 12h, 90m)")
	fs.StringVar(&grace, "grace", "7d", "keep expired files restorable this long, then purge them")
	fs.BoolVar(&dryRun, "dry-run", false, "list what would expire or be purged, change nothing")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) > 0 {
		fmt.Fprintf(env.stderr, "memtool gc: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	opts := expiry.CollectOptions{DryRun: dryRun}
	if opts.UnusedFor, err = parseDays(unusedFor); err != nil || opts.UnusedFor <= 0 {
		fmt.Fprintf(env.stderr, "memtool gc: --unused-for %q: want a duration such as 30d, 12h or 90m\n", unusedFor)
		return exitUsage
	}
	if opts.UnusedFor < expiry.DefaultResolution {
		// Every memtool process records accesses at the default resolution.
		res := shortDuration(expiry.DefaultResolution)
		fmt.Fprintf(env.stderr, "memtool gc: --unused-for %s is below the resolution of the access index (%s): a file used within the last %s may show an older access, so gc could expire it; give %s or more\n",
			unusedFor, res, res, res)
		return exitUsage
	}
	if opts.Grace, err = parseDays(grace); err != nil || opts.Grace <= 0 {
		fmt.Fprintf(env.stderr, "memtool gc: --grace %q: want a duration such as 7d\n", grace)
		return exitUsage
	}
	_, st, closer, err := openStack(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool gc: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	rep, err := expiry.Collect(ctx, st.belowExpiry, opts)
	verb, purged := "expired", "purged"
	if dryRun {
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
	if _, werr := fmt.Fprint(env.stdout, out.String()); werr != nil {
		return exitBrokenIO
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool gc: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// runRestore brings an expired file back from the trash.
func runRestore(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var list bool
	fs := newFlagSet("restore", "restore [--store URL] PATH | --list", env, &sf)
	fs.BoolVar(&list, "list", false, "list the files in the trash")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if list == (len(rest) == 1) || len(rest) > 1 {
		fmt.Fprintf(env.stderr, "memtool restore: give one PATH, or --list\n")
		return exitUsage
	}
	_, st, closer, err := openStack(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool restore: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	if list {
		trash, err := expiry.Trash(ctx, st.belowExpiry)
		if err != nil {
			fmt.Fprintf(env.stderr, "memtool restore: %v\n", err)
			return exitFailed
		}
		for _, t := range trash {
			if _, err := fmt.Fprintf(env.stdout, "%s (expired %s)\n", t.Path, t.Expired.Format(time.DateTime)); err != nil {
				return exitBrokenIO
			}
		}
		return exitOK
	}
	t, err := expiry.Restore(ctx, st.belowExpiry, rest[0], time.Now())
	var pe *memtool.PathError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(env.stderr, "memtool restore: %s\n", pe.Reason)
		return exitUsage
	case errors.Is(err, expiry.ErrNotInTrash):
		fmt.Fprintf(env.stderr, "memtool restore: %s is not in the trash (see memtool restore --list)\n", rest[0])
		return exitFailed
	case errors.Is(err, memtool.ErrExist):
		fmt.Fprintf(env.stderr, "memtool restore: %s exists again; rename or delete it first\n", rest[0])
		return exitFailed
	case err != nil:
		fmt.Fprintf(env.stderr, "memtool restore: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(env.stdout, "restored %s (expired %s)\n", t.Path, t.Expired.Format(time.DateTime))
	return exitOK
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
