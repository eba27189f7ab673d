package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/audit"
)

// The operations and outcomes that package audit logs (see audit.Entry
// and audit.Outcome): a filter for anything else would match nothing, so
// it is refused as a typo.
var (
	auditOps      = []string{"stat", "read", "list", "write", "create", "update", "mkdir", "remove", "remove_all", "rename"}
	auditOutcomes = []string{"ok", "refused", "edit_failed", "unknown", "cancelled", "not_exist", "exist", "not_dir", "is_dir", "irregular", "escapes", "too_large", "not_empty", "error"}
)

func setupLog(fs *flag.FlagSet) runFunc {
	var f audit.Filter
	var since, until string
	fs.StringVar(&f.Tenant, "tenant", "", "only this tenant's entries")
	fs.StringVar(&f.Op, "op", "", "only this operation ("+strings.Join(auditOps, ", ")+")")
	fs.StringVar(&f.Path, "path", "", "only this path and everything below it (/memories/...), and the renames and removals of a directory above it")
	fs.StringVar(&f.Outcome, "outcome", "", "only this outcome (ok, refused, edit_failed, not_exist, exist, error, ...)")
	fs.StringVar(&since, "since", "", "only entries at or after this time (RFC 3339) or this long ago (a duration: 90m, 24h)")
	fs.StringVar(&until, "until", "", "only entries before this time (RFC 3339) or this long ago")
	asJSON := fs.Bool("json", false, "print the entries as JSON lines, as in the log")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		now := time.Now()
		for _, t := range []struct {
			flag, value string
			dst         *time.Time
		}{{"since", since, &f.Since}, {"until", until, &f.Until}} {
			if t.value == "" {
				continue
			}
			var err error
			if *t.dst, err = parseWhen(t.value, now); err != nil {
				return inv.fail(exitUsage, "--%s %q: want an RFC 3339 time (2026-11-30T04:00:00Z) or a duration (24h)", t.flag, t.value)
			}
		}
		if msg := checkFilter(&f); msg != "" {
			return inv.usageError("%s", msg)
		}
		return runLog(ctx, inv, f, *asJSON)
	}
}

// checkFilter says what is wrong with a filter that could match no entry.
func checkFilter(f *audit.Filter) string {
	switch {
	case f.Op != "" && !slices.Contains(auditOps, f.Op):
		return fmt.Sprintf("--op %q: no such operation (known: %s)", f.Op, strings.Join(auditOps, ", "))
	case f.Outcome != "" && !slices.Contains(auditOutcomes, f.Outcome):
		return fmt.Sprintf("--outcome %q: no such outcome (known: %s)", f.Outcome, strings.Join(auditOutcomes, ", "))
	case f.Path != "" && f.Path != "/memories" && !strings.HasPrefix(f.Path, "/memories/"):
		return fmt.Sprintf("--path %q: the log's paths start with /memories", f.Path)
	case f.Tenant != "" && memtool.ValidateTenant(f.Tenant) != nil:
		return fmt.Sprintf("--tenant %q: %v", f.Tenant, memtool.ValidateTenant(f.Tenant))
	case !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until):
		return "--since is not before --until: no entry can match"
	}
	return ""
}

// runLog prints the entries of audit logs (written by package audit) that
// pass the filter, one per line.
func runLog(ctx context.Context, inv *invocation, f audit.Filter, asJSON bool) int {
	env := inv.env
	files := inv.args
	if len(files) == 0 {
		files = []string{"-"}
	}
	printed := 0
	print := func(e audit.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		printed++
		var err error
		if asJSON {
			b, _ := json.Marshal(e)
			_, err = fmt.Fprintf(env.stdout, "%s\n", b)
		} else {
			_, err = io.WriteString(env.stdout, formatEntry(e))
		}
		if err != nil {
			return errBrokenStdout
		}
		return nil
	}
	for _, name := range files {
		r := interruptible(ctx, env.stdin)
		if name == "-" && env.stdinTerminal {
			fmt.Fprintf(env.stderr, "memtool log: reading the log from stdin; end it with Ctrl-D (or name the log file)\n")
		}
		if name != "-" {
			file, err := os.Open(name)
			if err != nil {
				return inv.fail(exitFailed, "%v", err)
			}
			defer file.Close()
			r = file
		}
		if err := audit.Read(r, f, print); err != nil {
			switch {
			case errors.Is(err, errBrokenStdout):
				return exitBrokenIO
			case ctx.Err() != nil:
				return inv.fail(exitInterrupted, "interrupted")
			}
			return inv.fail(exitFailed, "%s: %v", name, err)
		}
	}
	if printed == 0 {
		if f == (audit.Filter{}) {
			return inv.fail(exitOK, "the log has no entries")
		}
		return inv.fail(exitOK, "no entry matches")
	}
	return exitOK
}

var errBrokenStdout = errors.New("stdout could not be written")

// parseWhen reads an RFC 3339 time, or a duration meaning that long before now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return now.Add(-d), nil
}

// formatEntry is one entry for people: time, tenant, operation, path,
// outcome, bytes, duration, separated by tabs.
func formatEntry(e audit.Entry) string {
	tenant := e.Tenant
	if tenant == "" {
		tenant = "-"
	}
	p := e.Path
	if e.NewPath != "" {
		p += " -> " + e.NewPath
	}
	extra := ""
	switch {
	case e.Op == "list":
		extra = plural(e.Entries, "entry", "entries")
	case e.Bytes > 0 || e.Op == "read" || e.Op == "write" || e.Op == "create" || e.Op == "update":
		extra = strconv.FormatInt(e.Bytes, 10) + " B"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%dµs\n", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), tenant, e.Op, p, e.Outcome, extra, e.Micros)
}
