package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/memtool/memtool/audit"
)

// runLog prints the entries of audit logs (written by package audit) that
// pass the filters, one per line.
func runLog(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("log", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: memtool log [flags] [FILE ...]   (no FILE, or -: stdin)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var f audit.Filter
	var since, until string
	var asJSON bool
	fs.StringVar(&f.Tenant, "tenant", "", "only this tenant's entries")
	fs.StringVar(&f.Op, "op", "", "only this operation (read, list, create, write, update, mkdir, remove, remove_all, rename, stat)")
	fs.StringVar(&f.Path, "path", "", "only this path and everything below it (/memories/...)")
	fs.StringVar(&f.Outcome, "outcome", "", "only this outcome (ok, refused, edit_failed, not_exist, exist, error, ...)")
	fs.StringVar(&since, "since", "", "only entries at or after this time (RFC 3339) or this long ago (a duration: 90m, 24h)")
	fs.StringVar(&until, "until", "", "only entries before this time (RFC 3339) or this long ago")
	fs.BoolVar(&asJSON, "json", false, "print the entries as JSON lines, as in the log")
	files, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	now := time.Now()
	for _, t := range []struct {
		flag, value string
		dst         *time.Time
	}{{"since", since, &f.Since}, {"until", until, &f.Until}} {
		if t.value == "" {
			continue
		}
		if *t.dst, err = parseWhen(t.value, now); err != nil {
			fmt.Fprintf(env.stderr, "memtool log: --%s %q: want an RFC 3339 time (2026-11-30T04:00:00Z) or a duration (24h)\n", t.flag, t.value)
			return exitUsage
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	print := func(e audit.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
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
		var r io.Reader = env.stdin
		if name != "-" {
			file, err := os.Open(name)
			if err != nil {
				fmt.Fprintf(env.stderr, "memtool log: %v\n", err)
				return exitFailed
			}
			defer file.Close()
			r = file
		}
		if err := audit.Read(r, f, print); err != nil {
			if errors.Is(err, errBrokenStdout) {
				return exitBrokenIO
			}
			fmt.Fprintf(env.stderr, "memtool log: %s: %v\n", name, err)
			return exitFailed
		}
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
		extra = strconv.Itoa(e.Entries) + " entries"
	case e.Bytes > 0 || e.Op == "read" || e.Op == "write" || e.Op == "create" || e.Op == "update":
		extra = strconv.FormatInt(e.Bytes, 10) + " B"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%dµs\n", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), tenant, e.Op, p, e.Outcome, extra, e.Micros)
}
