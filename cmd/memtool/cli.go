package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailed   = 1 // the command ran and failed (the model would see an error)
	exitUsage    = 2 // bad flags or arguments
	exitStore    = 3 // the store could not be opened
	exitBrokenIO = 4 // stdout could not be written
)

// signalStatus is the exit status of a command that a signal cut short:
// 128 + the signal's number, as shells report a process the signal ended
// (130 for SIGINT, 143 for SIGTERM).
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128
}

// A subcommand is one verb of the CLI.
type subcommand struct {
	name    string
	aliases []string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) int
}

// cliEnv is what main hands to every subcommand.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func subcommands() []subcommand {
	return []subcommand{
		{name: "exec", summary: "read tool inputs as JSON lines on stdin, answer each as a JSON line", run: runExec},
		{name: "view", summary: "show a file with line numbers, or list a directory", run: runView},
		{name: "create", summary: "create a file (text from --text or stdin)", run: runCreate},
		{name: "str_replace", aliases: []string{"str-replace"}, summary: "replace the one occurrence of --old with --new", run: runStrReplace},
		{name: "insert", summary: "insert text (from --text or stdin) after a line", run: runInsert},
		{name: "delete", summary: "delete a file or a directory", run: runDelete},
		{name: "rename", summary: "rename or move a file or directory (never overwrites)", run: runRename},
		{name: "run", summary: "do one task with Claude and its memory (needs ANTHROPIC_API_KEY)", run: runRun},
		{name: "chat", summary: "talk with Claude, with its memory, in the terminal (needs ANTHROPIC_API_KEY)", run: runChat},
		{name: "init", summary: "seed a store from a template (dev: progress log, feature checklist, decisions)", run: runInit},
		{name: "gc", summary: "move files not used for a while (--unused-for 30d) to a hidden trash; purge old trash", run: runGC},
		{name: "restore", summary: "bring a file back from the trash of gc (--list to see it)", run: runRestore},
		{name: "history", summary: "list the earlier versions of a file kept by package history", run: runHistory},
		{name: "diff", summary: "show what changed between versions of a file (--from N --to N|current)", run: runDiff},
		{name: "revert", summary: "bring back an earlier version of a file (--to N)", run: runRevert},
		{name: "keygen", summary: "make an encryption key (package encrypt), or rotate a key file", run: runKeygen},
		{name: "rekey", summary: "re-encrypt every file with the first key of $MEMTOOL_KEY or $MEMTOOL_KEY_FILE", run: runRekey},
		{name: "log", summary: "read an audit log (package audit): filter by tenant, operation, path, outcome, time", run: runLog},
		{name: "migrate", summary: "copy a whole store to another backend (--from URL --to URL), verified by checksum", run: runMigrate},
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWithEnv(ctx, args, &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr, getenv: osGetenv})
}

func runWithEnv(ctx context.Context, args []string, env *cliEnv) int {
	if len(args) == 0 {
		usage(env.stderr)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stdout)
		return exitOK
	}
	for _, sc := range subcommands() {
		if args[0] == sc.name || contains(sc.aliases, args[0]) {
			return sc.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "memtool: unknown command %q (run 'memtool help')\n", args[0])
	return exitUsage
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("memtool runs Claude's memory tool (memory_20250818) against a memory store.\n\nUsage:\n  memtool <command> [flags] [arguments]\n\nCommands:\n")
	for _, sc := range subcommands() {
		fmt.Fprintf(&b, "  %-12s %s\n", sc.name, sc.summary)
	}
	b.WriteString(`
Every store-using command takes --store URL:
  ./memories, /abs/dir or file:///abs/dir   the file store in that directory (created if missing)
  mem:                                      an in-memory store (gone when memtool exits)
  sqlite:///abs/path.db                     a SQLite file
  postgres://user@host/db                   a PostgreSQL database
  s3://bucket?region=R&prefix=P             S3 (also gs://, azblob://, file+blob://, mem+blob://)
The default is $MEMTOOL_STORE, else ./memories.
--tenant ID picks one tenant's memory in a multi-tenant store;
--policy FILE (default $MEMTOOL_POLICY) applies limits, secret filtering,
audit, encryption, expiry and history.

Run 'memtool <command> -h' for the flags of one command.
`)
	io.WriteString(w, b.String())
}
