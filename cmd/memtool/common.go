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
	store, closer, err := openStore(context.Background(), storeURL(sf.store, env), sf.tenant)
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.NewTextHandler(env.stderr, nil))
	return memtool.New(store, &memtool.Options{Overwrite: sf.overwrite, Logger: logger}), closer, nil
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
