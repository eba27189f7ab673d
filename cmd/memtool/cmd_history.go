package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/memtool/memtool"
	versions "github.com/memtool/memtool/history"
)

// runHistory lists the kept versions of a file (package history).
func runHistory(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	fs := newFlagSet("history", "history [--store URL] PATH", env, &sf)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) != 1 {
		fmt.Fprintf(env.stderr, "memtool history: give one PATH\n")
		return exitUsage
	}
	_, st, closer, err := openStack(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool history: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	vs, err := versions.Versions(ctx, st.belowHistory, rest[0])
	if err != nil {
		return historyError(env, "history", err)
	}
	if len(vs) == 0 {
		fmt.Fprintf(env.stderr, "memtool history: no earlier versions of %s\n", rest[0])
		return exitOK
	}
	for _, v := range vs {
		if _, err := fmt.Fprintf(env.stdout, "%d\t%s\t%s\t%d bytes\n", v.N, v.Time.Format(time.DateTime), v.Op, v.Size); err != nil {
			return exitBrokenIO
		}
	}
	return exitOK
}

// runDiff shows what changed between two versions of a file, or a version
// and the current content.
func runDiff(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var from, to string
	fs := newFlagSet("diff", "diff [--store URL] [--from N] [--to N] PATH", env, &sf)
	fs.StringVar(&from, "from", "", "the older version (default: the latest kept)")
	fs.StringVar(&to, "to", "current", "the newer version, or current")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) != 1 {
		fmt.Fprintf(env.stderr, "memtool diff: give one PATH\n")
		return exitUsage
	}
	p := rest[0]
	_, st, closer, err := openStack(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool diff: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	inner := st.belowHistory
	read := func(v string) (string, string, error) {
		if v == "current" {
			name, _, err := memtool.CleanPath(p)
			if err != nil {
				return "", "", err
			}
			data, err := inner.ReadFile(ctx, name, memtool.DefaultMaxReadSize)
			if errors.Is(err, memtool.ErrNotExist) {
				return "", p + " (deleted)", nil
			}
			return string(data), p + " (current)", err
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return "", "", fmt.Errorf("version %q: want a number or current", v)
		}
		data, err := versions.Read(ctx, inner, p, n)
		return string(data), fmt.Sprintf("%s (version %d)", p, n), err
	}
	if from == "" {
		vs, err := versions.Versions(ctx, inner, p)
		if err != nil {
			return historyError(env, "diff", err)
		}
		if len(vs) == 0 {
			fmt.Fprintf(env.stderr, "memtool diff: no earlier versions of %s\n", p)
			return exitFailed
		}
		from = strconv.Itoa(vs[len(vs)-1].N)
	}
	a, nameA, err := read(from)
	if err != nil {
		return historyError(env, "diff", err)
	}
	b, nameB, err := read(to)
	if err != nil {
		return historyError(env, "diff", err)
	}
	if _, err := fmt.Fprint(env.stdout, versions.Diff(a, b, nameA, nameB)); err != nil {
		return exitBrokenIO
	}
	return exitOK
}

// runRevert makes an earlier version the content of a file again; the
// content it replaces is kept as a version.
func runRevert(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var to int
	fs := newFlagSet("revert", "revert [--store URL] PATH --to N", env, &sf)
	fs.IntVar(&to, "to", 0, "the version to bring back (see memtool history)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) != 1 || to <= 0 {
		fmt.Fprintf(env.stderr, "memtool revert: give one PATH and --to N\n")
		return exitUsage
	}
	_, st, closer, err := openStack(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool revert: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	inner := st.belowHistory
	if err := versions.Revert(ctx, versions.New(inner, nil), inner, rest[0], to); err != nil {
		return historyError(env, "revert", err)
	}
	fmt.Fprintf(env.stdout, "reverted %s to version %d\n", rest[0], to)
	return exitOK
}

func historyError(env *cliEnv, cmd string, err error) int {
	var pe *memtool.PathError
	if errors.As(err, &pe) {
		fmt.Fprintf(env.stderr, "memtool %s: %s\n", cmd, pe.Reason)
		return exitUsage
	}
	fmt.Fprintf(env.stderr, "memtool %s: %v\n", cmd, err)
	return exitFailed
}
