package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/memtool/memtool"
)

// storeFlags are the flags every store-using subcommand shares.
type storeFlags struct {
	store     string
	tenant    string
	policy    string
	overwrite bool
}

func newFlagSet(name, usage string, env *cliEnv, sf *storeFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: memtool %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&sf.store, "store", "", "store URL (default $MEMTOOL_STORE, else ./memories)")
	fs.BoolVar(&sf.overwrite, "overwrite", false, "let create replace an existing file")
	fs.StringVar(&sf.tenant, "tenant", "", "the tenant whose memory to use, in a multi-tenant store")
	fs.StringVar(&sf.policy, "policy", "", "a policy file: limits, secrets, audit, encrypt, expiry, history (default $MEMTOOL_POLICY)")
	return fs
}

// parseFlags parses args, which may mix flags and positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// openMemory opens the store named by the flags and wraps it in a Memory.
func openMemory(env *cliEnv, sf *storeFlags) (*memtool.Memory, io.Closer, error) {
	mem, _, closer, err := openStack(env, sf)
	return mem, closer, err
}

// openStack is openMemory that also returns the layers of the policies, for
// the commands that administer them (gc, restore, history, diff, revert).
func openStack(env *cliEnv, sf *storeFlags) (*memtool.Memory, *policyStack, io.Closer, error) {
	ctx := context.Background()
	url := storeURL(sf.store, env)
	store, closer, err := openStore(ctx, url, sf.tenant)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := openPolicies(ctx, env, sf, store, closer)
	if err != nil {
		return nil, nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(redactingWriter{env.stderr, []string{url}}, nil))
	return memtool.New(st.top, &memtool.Options{Overwrite: sf.overwrite, Logger: logger}), st, st, nil
}

// runOne opens the store, executes one command and prints its text: the
// answer on stdout, or the error on stderr with exit status 1.
func runOne(ctx context.Context, env *cliEnv, sf *storeFlags, cmd memtool.Command) int {
	mem, closer, err := openMemory(env, sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool: %v\n", err)
		return exitStore
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
		_, err = fmt.Fprintln(env.stdout, res.Text)
	}
	if err != nil {
		return exitBrokenIO
	}
	return exitOK
}
