package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/memstore"
)

// openMemory opens the store named by the flags, with its policies, and
// wraps it in a Memory. create says whether a store that is not there may
// be made (see openStore).
func openMemory(ctx context.Context, env *cliEnv, sf *storeFlags, create bool) (*memtool.Memory, io.Closer, error) {
	mem, _, closer, err := openStack(ctx, env, sf, create)
	return mem, closer, err
}

// openStack is openMemory that also returns the layers of the policies, for
// the commands that administer them (gc, restore, history, diff, revert).
func openStack(ctx context.Context, env *cliEnv, sf *storeFlags, create bool) (*memtool.Memory, *policyStack, io.Closer, error) {
	return openStackWith(ctx, env, sf, func(url string) (memtool.Store, io.Closer, error) {
		return openStore(ctx, url, sf.tenant, create)
	})
}

// openEditMemory is openMemory for a command that changes a file that must
// be there already (str_replace, insert, delete, rename). On a store or a
// tenant that is not there yet such a command can only fail, so it runs
// on an empty memory instead, with the same policies, and gets the same
// answer without leaving a new, empty store or tenant behind.
func openEditMemory(ctx context.Context, env *cliEnv, sf *storeFlags) (*memtool.Memory, io.Closer, error) {
	mem, _, closer, err := openStackWith(ctx, env, sf, func(url string) (memtool.Store, io.Closer, error) {
		store, closer, err := openStore(ctx, url, sf.tenant, false)
		switch {
		case err == nil:
			return store, closer, nil
		case errors.Is(err, fs.ErrNotExist):
			return memstore.New(), io.NopCloser(nil), nil
		}
		return openStore(ctx, url, sf.tenant, true) // says what is wrong, as before
	})
	return mem, closer, err
}

func openStackWith(ctx context.Context, env *cliEnv, sf *storeFlags, open func(url string) (memtool.Store, io.Closer, error)) (*memtool.Memory, *policyStack, io.Closer, error) {
	url := storeURL(sf.store, env)
	// The tenant id is checked, and the policy read and its keys loaded,
	// before the store opens: a bad one creates nothing.
	if sf.tenant != "" {
		if err := memtool.ValidateTenant(sf.tenant); err != nil {
			return nil, nil, nil, err
		}
	}
	p, err := flagPolicyReady(env, sf)
	if err != nil {
		return nil, nil, nil, err
	}
	store, closer, err := open(url)
	if err != nil {
		return nil, nil, nil, err
	}
	// The policy goes over the store once checkPolicy has checked it
	// against the policies the store records.
	st, err := stackPolicy(ctx, env, sf, store, p)
	if err != nil {
		closer.Close()
		return nil, nil, nil, err
	}
	st.closers = append(st.closers, closer)
	logger := slog.New(slog.NewTextHandler(redactingWriter{env.stderr, []string{url}}, nil))
	return memtool.New(st.top, &memtool.Options{Overwrite: sf.overwrite, Logger: logger}), st, st, nil
}

// runOne opens the store, executes one command and prints its text: the
// answer on stdout, or the error on stderr with exit status 1. Only a
// command that writes may create the store.
func runOne(ctx context.Context, inv *invocation, cmd memtool.Command, create bool) int {
	env := inv.env
	open := func() (*memtool.Memory, io.Closer, error) { return openMemory(ctx, env, &inv.sf, create) }
	switch cmd.(type) {
	case *memtool.StrReplace, *memtool.Insert, *memtool.Delete, *memtool.Rename:
		open = func() (*memtool.Memory, io.Closer, error) { return openEditMemory(ctx, env, &inv.sf) }
	}
	if refused(cmd) {
		// The path gate refuses it before any store is touched: answered
		// on an empty memory, the flags and the policy checked as ever, so
		// a command that can only fail does not create a store (nor
		// record a policy in one).
		open = func() (*memtool.Memory, io.Closer, error) {
			mem, _, closer, err := openStackWith(ctx, env, &inv.sf, func(string) (memtool.Store, io.Closer, error) {
				return memstore.New(), io.NopCloser(nil), nil
			})
			return mem, closer, err
		}
	}
	mem, closer, err := open()
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer closer.Close()
	res := mem.Execute(ctx, cmd)
	if res.IsError {
		fmt.Fprintln(env.stderr, res.Text)
		return exitFailed
	}
	if res.Image != nil {
		_, err = fmt.Fprintf(env.stdout, "[%s image, %d bytes]\n", res.Image.MediaType, len(res.Image.Data))
	} else {
		_, err = fmt.Fprintln(env.stdout, env.termText(res.Text))
	}
	if err != nil {
		return exitBrokenIO
	}
	return exitOK
}

// refused reports whether the path gate refuses a path of a command that
// writes. (A view opens the store all the same: it never creates one.)
func refused(cmd memtool.Command) bool {
	if _, ok := cmd.(*memtool.View); ok {
		return false
	}
	paths := []string{cmd.Target()}
	if r, ok := cmd.(*memtool.Rename); ok {
		paths = append(paths, r.NewPath)
	}
	for _, p := range paths {
		if _, _, err := memtool.CleanPath(p); err != nil {
			return true
		}
	}
	return false
}

// openStackOrFail is openStack for a verb: a store that cannot be opened
// is reported with the verb's prefix and exit status 3.
func openStackOrFail(ctx context.Context, inv *invocation, create bool) (*policyStack, io.Closer, int) {
	_, st, closer, err := openStack(ctx, inv.env, &inv.sf, create)
	if err != nil {
		return nil, nil, inv.fail(exitStore, "%v", err)
	}
	return st, closer, exitOK
}
