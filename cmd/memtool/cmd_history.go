package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/memtool/memtool"
	versions "github.com/memtool/memtool/history"
)

// The verbs of package history: history, diff and revert. history and
// diff only read: they never create a store, nor record a policy in one.

// runHistory lists the kept versions of a file (package history).
func runHistory(ctx context.Context, env *cliEnv, inv *invocation) int {
	inv.sf.noRecord = true
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	st.settleHistory(ctx)
	vs, err := versions.Versions(ctx, st.belowHistory, inv.args[0])
	if err != nil {
		return historyError(inv, err)
	}
	if len(vs) == 0 {
		return inv.fail(exitOK, "%s", noVersions(st, inv.args[0]))
	}
	for _, v := range vs {
		if _, err := fmt.Fprintf(env.stdout, "%d\t%s\t%s\t%s\n", v.N, v.Time.Format(time.DateTime), v.Op, plural(v.Size, "byte")); err != nil {
			return exitBrokenIO
		}
	}
	return exitOK
}

// settleHistory finishes the deletes that a process cut off part way
// left in history's trash, so that their versions are listed and read
// (versions.Store.Settle); it does nothing without the history policy.
func (st *policyStack) settleHistory(ctx context.Context) {
	if h, ok := st.history.(*versions.Store); ok {
		h.Settle(ctx)
	}
}

// noVersions says that the file p has no kept versions, and why there
// may be none: without the history policy nothing keeps them.
func noVersions(st *policyStack, p string) string {
	if st.history == nil {
		return "no earlier versions of " + p + " (no history policy is in force, so none are kept: see --policy)"
	}
	return "no earlier versions of " + p
}

func setupDiff(fs *flag.FlagSet) runFunc {
	from := fs.String("from", "", "the older version (default: the latest kept)")
	to := fs.String("to", "current", "the newer version, or current")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		return runDiff(ctx, inv, *from, *to)
	}
}

// runDiff shows what changed between two versions of a file, or a version
// and the current content.
func runDiff(ctx context.Context, inv *invocation, from, to string) int {
	p := inv.args[0]
	inv.sf.noRecord = true
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	st.settleHistory(ctx)
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
		data, err := versions.ReadLimit(ctx, inner, p, n, memtool.DefaultMaxReadSize)
		return string(data), fmt.Sprintf("%s (version %d)", p, n), err
	}
	if from == "" {
		vs, err := versions.Versions(ctx, inner, p)
		if err != nil {
			return historyError(inv, err)
		}
		if len(vs) == 0 {
			return inv.fail(exitFailed, "%s", noVersions(st, p))
		}
		from = strconv.Itoa(vs[len(vs)-1].N)
	}
	a, nameA, err := read(from)
	if err != nil {
		return historyError(inv, err)
	}
	b, nameB, err := read(to)
	if err != nil {
		return historyError(inv, err)
	}
	if _, err := fmt.Fprint(inv.env.stdout, inv.env.termText(versions.Diff(a, b, nameA, nameB))); err != nil {
		return exitBrokenIO
	}
	return exitOK
}

func setupRevert(fs *flag.FlagSet) runFunc {
	to := fs.Int("to", 0, "the version to bring back (see memtool history)")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if len(inv.args) != 1 || *to <= 0 {
			return inv.fail(exitUsage, "give one PATH and --to N")
		}
		return runRevert(ctx, inv, inv.args[0], *to)
	}
}

const revertAbout = `Needs the history policy in force ("history" in --policy FILE or
$MEMTOOL_POLICY): the version goes back through every policy, as any other
write (audited, refused by limits or secrets when it breaks them, redacted
by secrets' redact, which revert then says), and the content it replaces is
kept as a version.`

// runRevert makes an earlier version the content of a file again; the
// content it replaces is kept as a version.
func runRevert(ctx context.Context, inv *invocation, name string, to int) int {
	st, closer, code := openStackOrFail(ctx, inv, false)
	if code != exitOK {
		return code
	}
	defer closer.Close()
	// The write goes through the whole stack, like any other change: the
	// audit log records it, the secrets and limits policies may refuse it
	// (a version from before they were added can break them), and the
	// history layer of the policy keeps the replaced content, pruning as
	// the policy says. Without a history policy in force there is no such
	// layer to write through: a store may hold versions without recording
	// the policy (made by a Go program with history.New), and a bare layer
	// put in below the others would write past them all.
	if st.history == nil {
		return inv.fail(exitUsage, `revert needs the history policy in force: give --policy FILE (or $MEMTOOL_POLICY) with "history"`)
	}
	st.settleHistory(ctx)
	if err := versions.Revert(ctx, st.top, st.belowHistory, name, to); err != nil {
		return historyError(inv, err)
	}
	// A policy may have changed what was written (the secrets policy
	// redacts): then the file does not hold the version, which stays.
	if !holdsVersion(ctx, st.belowHistory, name, to) {
		fmt.Fprintf(inv.env.stderr, "memtool revert: %s holds version %d as the policies wrote it, which is not as version %d holds it; the version stays as it was\n", name, to, to)
		return writeOut(inv.env, fmt.Sprintf("reverted %s to version %d, as the policies wrote it\n", name, to))
	}
	return writeOut(inv.env, fmt.Sprintf("reverted %s to version %d\n", name, to))
}

// holdsVersion reports whether the file at the virtual path p holds
// version n, or whether that is unknown (the version was pruned since).
func holdsVersion(ctx context.Context, inner memtool.Store, p string, n int) bool {
	want, err := versions.Read(ctx, inner, p, n)
	if err != nil {
		return true
	}
	name, _, _ := memtool.CleanPath(p)
	got, err := inner.ReadFile(ctx, name, int64(len(want))+1)
	return err == nil && bytes.Equal(got, want)
}

func historyError(inv *invocation, err error) int {
	var pe *memtool.PathError
	if errors.As(err, &pe) {
		return inv.fail(exitUsage, "%s", pe.Reason)
	}
	return inv.fail(exitFailed, "%v", err)
}
