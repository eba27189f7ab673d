package main

import (
	"context"
	"errors"
	"flag"
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
	exitAPI      = 5 // run, chat: the Claude API failed

	exitInterrupted = 130 // Ctrl-C (128 + SIGINT, as shells report it)
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

// cliEnv is what main hands to every command.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// stdinTerminal reports whether stdin is a terminal, where create and
	// insert say that they wait for the text.
	stdinTerminal  bool
	stdoutTerminal bool // stdout is a terminal: memory text is shown with its controls escaped (termText)
}

// A command is one verb of the CLI, as the command table declares it.
// Parsing its flags and arguments, its help, the "memtool NAME:" prefix of
// its messages and the exit status of a usage error are the table's work
// (see runCommand); the verb's file holds only what the verb does.
type command struct {
	name    string
	aliases []string
	summary string // one line, for memtool help
	usage   string // what follows "memtool NAME" in the usage line
	about   string // more help, after the usage line (optional)
	args    argCount
	groups  flagGroup
	// setup declares the verb's own flags on fs and returns the function
	// that runs the verb once they are parsed.
	setup func(fs *flag.FlagSet) runFunc
	// leftOut is the build tag that adds the verb when this build leaves
	// it out ("" when it is in): the verb is listed, and says how to get it.
	leftOut string
}

// A runFunc runs a verb once its flags and arguments are parsed.
type runFunc func(ctx context.Context, env *cliEnv, inv *invocation) int

// noFlags is the setup of a verb without flags of its own.
func noFlags(run runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return run }
}

// argCount is how many positional arguments a verb takes, and what to say
// when it gets another number.
type argCount struct {
	min, max int    // max -1: no limit
	want     string // "want one PATH"; "" for a verb that takes none
}

// flagGroup names flags that several verbs share.
type flagGroup uint8

const (
	storeFlag     flagGroup = 1 << iota // --store
	tenantFlag                          // --tenant
	policyFlag                          // --policy
	overwriteFlag                       // --overwrite: a create (yours, or the model's in exec, run, chat) may replace a file

	// memoryFlags pick a memory: the store, the tenant, the policies.
	memoryFlags = storeFlag | tenantFlag | policyFlag
)

// commands is the command table: every verb, in the order memtool help
// lists them. Each verb's setup function and what it runs are in its file,
// cmd_<verb>.go.
func commands() []*command {
	path := argCount{1, 1, "want one PATH"}
	none := argCount{0, 0, ""}
	return []*command{
		{name: "exec", summary: "read tool inputs as JSON lines on stdin, answer each as a JSON line",
			usage: "[--store URL] [--overwrite] [--timeout D] < inputs.jsonl", args: none, groups: memoryFlags | overwriteFlag, setup: setupExec},
		{name: "view", summary: "show a file with line numbers, or list a directory",
			usage: "[--store URL] [--range START,END] PATH", args: path, groups: memoryFlags, setup: setupView},
		{name: "create", summary: "create a file (text from --text or stdin)",
			usage: "[--store URL] [--overwrite] [--text TEXT] PATH  (text from stdin without --text)", args: path, groups: memoryFlags | overwriteFlag, setup: setupCreate},
		{name: "str_replace", aliases: []string{"str-replace"}, summary: "replace the one occurrence of --old with --new",
			usage: "[--store URL] --old TEXT [--new TEXT] PATH", args: argCount{1, 1, "want --old TEXT and one PATH"}, groups: memoryFlags, setup: setupStrReplace},
		{name: "insert", summary: "insert text (from --text or stdin) after a line",
			usage: "[--store URL] [--text TEXT] PATH LINE  (text from stdin without --text; LINE 0: before the first line)", args: argCount{2, 2, "want PATH and LINE"}, groups: memoryFlags, setup: setupInsert},
		{name: "delete", summary: "delete a file or a directory",
			usage: "[--store URL] PATH", args: path, groups: memoryFlags, setup: setupDelete},
		{name: "rename", summary: "rename or move a file or directory (never overwrites)",
			usage: "[--store URL] OLD_PATH NEW_PATH", args: argCount{2, 2, "want OLD_PATH and NEW_PATH"}, groups: memoryFlags, setup: setupRename},
		{name: "search", summary: "print the lines that match QUERY as PATH:LINE:TEXT (exit 0 matched, 1 none, 2 error)",
			usage: "[--store URL] [--tenant ID] [--regex] [--case-sensitive] [--path PREFIX] [--limit N] QUERY", args: argCount{1, 1, "want one QUERY"}, groups: memoryFlags, setup: setupSearch},
		{name: "mcp", summary: "serve the memory to an MCP client (Claude Desktop, Claude Code, ...) on stdio",
			usage: "[--store URL] [--tenant ID] [--policy FILE] [--read-only] [--overwrite] [--timeout D]", about: mcpAbout, args: none, groups: memoryFlags | overwriteFlag, setup: setupMCP},
		{name: "run", summary: "do one task with Claude and its memory (needs ANTHROPIC_API_KEY)",
			usage: `[--store URL] [flags] "task"   (task "-": read it from stdin)`, args: argCount{0, -1, ""}, groups: memoryFlags | overwriteFlag, setup: setupRun, leftOut: claudeLeftOut},
		{name: "chat", summary: "talk with Claude, with its memory, in the terminal (needs ANTHROPIC_API_KEY)",
			usage: "[--store URL] [flags]", about: chatAbout, args: none, groups: memoryFlags | overwriteFlag, setup: setupChat, leftOut: claudeLeftOut},
		{name: "init", summary: "seed a store from a template (dev: progress log, feature checklist, decisions)",
			usage: "[--template NAME] [--store URL]", args: none, groups: memoryFlags, setup: setupInit},
		{name: "gc", summary: "move files not used for a while (--unused-for 30d) to a hidden trash; purge old trash",
			usage: "[--store URL] --unused-for 30d [--grace 7d] [--dry-run] | --reset-index", about: gcAbout, args: none, groups: memoryFlags, setup: setupGC},
		{name: "restore", summary: "bring a file back from the trash of gc (--list to see it)",
			usage: "[--store URL] PATH | --list", about: restoreAbout, args: argCount{0, -1, ""}, groups: memoryFlags, setup: setupRestore},
		{name: "history", summary: "list the earlier versions of a file kept by package history",
			usage: "[--store URL] PATH", args: argCount{1, 1, "give one PATH"}, groups: memoryFlags, setup: noFlags(runHistory)},
		{name: "diff", summary: "show what changed between versions of a file (--from N --to N|current)",
			usage: "[--store URL] [--from N] [--to N] PATH", args: argCount{1, 1, "give one PATH"}, groups: memoryFlags, setup: setupDiff},
		{name: "revert", summary: "bring back an earlier version of a file (--to N)",
			usage: "[--store URL] PATH --to N", about: revertAbout, args: argCount{0, -1, ""}, groups: memoryFlags, setup: setupRevert},
		{name: "keygen", summary: "make an encryption key (package encrypt), or rotate a key file",
			usage: "[--id ID] [--out FILE | --rotate FILE]", about: "Prints a new encryption key (ID:base64) on stdout, or writes it to a key file (mode 0600).", args: none, setup: setupKeygen},
		{name: "rekey", summary: "re-encrypt every file not yet under the first key of $MEMTOOL_KEY or $MEMTOOL_KEY_FILE",
			usage: "[--store URL] [--tenant ID | --all-tenants]", about: "Keys come from $MEMTOOL_KEY, else the key file $MEMTOOL_KEY_FILE; the first one encrypts.", args: none, groups: storeFlag | tenantFlag, setup: setupRekey},
		{name: "log", summary: "read an audit log (package audit): filter by tenant, operation, path, outcome, time",
			usage: "[flags] [FILE ...]   (no FILE, or -: stdin)", args: argCount{0, -1, ""}, setup: setupLog},
		{name: "migrate", summary: "copy a whole store to another backend (--from URL --to URL), verified by checksum",
			usage: "--from URL --to URL [--tenant ID | --all-tenants] [--force] [--to-policy FILE] [--memory-only]", args: none, setup: setupMigrate},
		{name: "info", summary: "describe a store: its kind, tenancy, policies, encryption, files and bytes",
			usage: "[--store URL] [--tenant ID]", args: none, groups: memoryFlags, setup: noFlags(runInfo)},
		{name: "tenants", summary: "list the tenants of a multi-tenant store, one per line",
			usage: "[--store URL]", args: none, groups: storeFlag, setup: noFlags(runTenants)},
		{name: "serve", summary: "serve the memory over HTTP to many clients, with API keys (POST /v1/memory)",
			usage: "[--store URL] [--listen HOST:PORT] [--policy FILE] [--tls-cert F --tls-key F]", about: serveAbout, args: none, groups: storeFlag | policyFlag | overwriteFlag, setup: setupServe},
		{name: "keys", summary: "add, list or revoke the API keys of memtool serve",
			usage: "add --tenant ID [--scope read|write|admin] [--name N] [--expires D] | list | revoke ID  [--store URL]", about: keysAbout, args: argCount{1, 2, "want add, list or revoke ID"}, groups: storeFlag | tenantFlag, setup: setupKeys},
		{name: "version", summary: "print memtool's version",
			usage: "", args: none, setup: setupVersion},
		{name: "completion", summary: "print a shell completion script (bash, zsh or fish)",
			usage: "bash|zsh|fish", about: completionAbout, args: argCount{1, 1, "want one shell: bash, zsh or fish"}, setup: setupCompletion},
	}
}

// lookup returns the verb called name, or nil.
func lookup(name string) *command {
	for _, c := range commands() {
		if name == c.name || contains(c.aliases, name) {
			return c
		}
	}
	return nil
}

// An invocation is one run of a verb: its parsed arguments and the shared
// flags it takes.
type invocation struct {
	cmd  *command
	env  *cliEnv
	args []string
	sf   storeFlags
}

// fail says "memtool NAME: msg" on stderr and returns code.
func (inv *invocation) fail(code int, format string, a ...any) int {
	fmt.Fprintf(inv.env.stderr, "memtool %s: %s\n", inv.cmd.name, fmt.Sprintf(format, a...))
	return code
}

// usageError reports a usage error, pointing to the verb's help.
func (inv *invocation) usageError(format string, a ...any) int {
	return inv.fail(exitUsage, "%s (run 'memtool %s -h')", fmt.Sprintf(format, a...), inv.cmd.name)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWithEnv(ctx, args, &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr, getenv: osGetenv, stdinTerminal: isTerminal(stdin), stdoutTerminal: isTerminal(stdout)})
}

func runWithEnv(ctx context.Context, args []string, env *cliEnv) int {
	if len(args) == 0 {
		usage(env.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 1 && args[0] == "help" {
			return helpCommand(env, args[1])
		}
		usage(env.stdout)
		return exitOK
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(env.stderr, "memtool: unknown command %q (run 'memtool help')\n", args[0])
		return exitUsage
	}
	return c.run(ctx, env, args[1:])
}

// helpCommand answers memtool help NAME.
func helpCommand(env *cliEnv, name string) int {
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(env.stderr, "memtool help: unknown command %q (run 'memtool help')\n", name)
		return exitUsage
	}
	fs, _ := c.flagSet(&invocation{cmd: c, env: env})
	c.help(env.stdout, fs)
	return exitOK
}

// flagSet returns the verb's flags, bound to inv, and the function that
// runs the verb.
func (c *command) flagSet(inv *invocation) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are written by run
	fs.Usage = func() {}
	if c.groups&storeFlag != 0 {
		fs.StringVar(&inv.sf.store, "store", "", "store URL (default $MEMTOOL_STORE, else ./memories)")
	}
	if c.groups&tenantFlag != 0 {
		fs.StringVar(&inv.sf.tenant, "tenant", "", "the tenant whose memory to use, in a multi-tenant store")
	}
	if c.groups&policyFlag != 0 {
		fs.StringVar(&inv.sf.policy, "policy", "", "a policy file: limits, secrets, audit, encrypt, expiry, history (default $MEMTOOL_POLICY)")
	}
	if c.groups&overwriteFlag != 0 {
		fs.BoolVar(&inv.sf.overwrite, "overwrite", false, "let create replace an existing file")
	}
	if c.leftOut != "" {
		return fs, nil
	}
	return fs, c.setup(fs)
}

// help writes the verb's usage line, summary and flags.
func (c *command) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\n%s.\n", strings.TrimSpace("memtool "+c.name+" "+c.usage), upperFirst(c.summary))
	if len(c.aliases) > 0 {
		fmt.Fprintf(w, "Also called: %s.\n", strings.Join(c.aliases, ", "))
	}
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", c.about)
	}
	if c.leftOut != "" {
		fmt.Fprintf(w, "\n%s.\n", upperFirst(c.notBuilt()))
		return
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// run parses args for the verb and runs it. -h and --help anywhere show
// the verb's help on stdout.
func (c *command) run(ctx context.Context, env *cliEnv, args []string) int {
	inv := &invocation{cmd: c, env: env}
	if c.leftOut != "" {
		if contains(args, "-h") || contains(args, "--help") || contains(args, "-help") {
			c.help(env.stdout, nil)
			return exitOK
		}
		return inv.fail(exitUsage, "%s", c.notBuilt())
	}
	fs, runVerb := c.flagSet(inv)
	pos, err := parseFlags(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.help(env.stdout, fs)
		return exitOK
	case err != nil:
		fmt.Fprintf(env.stderr, "memtool %s: %v\n", c.name, err)
		c.help(env.stderr, fs)
		return exitUsage
	}
	inv.args = pos
	switch {
	case c.args.max == 0 && len(pos) > 0:
		return inv.fail(exitUsage, "unexpected argument %q", pos[0])
	case len(pos) < c.args.min || c.args.max >= 0 && len(pos) > c.args.max:
		return inv.usageError("%s", c.args.want)
	}
	return runVerb(ctx, env, inv)
}

// notBuilt says that this build leaves the verb out, and how to get it.
func (c *command) notBuilt() string {
	return fmt.Sprintf("this build of memtool leaves out %s; rebuild with -tags %s (go install -tags %s ./cmd/memtool), or use a release binary",
		c.name, c.leftOut, c.leftOut)
}

// storeFlags are the values of the shared flags (flagGroup).
type storeFlags struct {
	store     string
	tenant    string
	policy    string
	overwrite bool
	// noRecord: check the policy against the store's record, but record
	// no policy that starts now: for the commands that only look (info,
	// search, history, diff, restore --list, gc --dry-run), which would otherwise
	// commit the store to the policy and lock out every process without it.
	noRecord bool
}

// parseFlags parses args, which may mix flags and positional arguments. A
// negative number (insert PATH -1) is a positional argument, not a flag.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if len(args) > 0 && isNegativeNumber(args[0]) {
			positional = append(positional, args[0])
			args = args[1:]
			continue
		}
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

// isNegativeNumber reports whether s is "-" followed by digits.
func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	return strings.Trim(s[1:], "0123456789") == ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// plural writes n and the noun, singular for 1: "1 file", "2 files". The
// plural form is the noun with an s, or forms[0] if given ("entries").
func plural[N int | int64](n N, noun string, forms ...string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if len(forms) > 0 {
		return fmt.Sprintf("%d %s", n, forms[0])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("memtool runs Claude's memory tool (memory_20250818) against a memory store.\n\nUsage:\n  memtool <command> [flags] [arguments]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-12s %s", c.name, c.summary)
		if c.leftOut != "" {
			fmt.Fprintf(&b, " [not in this build: -tags %s]", c.leftOut)
		}
		b.WriteString("\n")
	}
	b.WriteString(`
Every store-using command takes --store URL:
  ./memories, /abs/dir or file:///abs/dir   the file store in that directory (created if missing)
  mem:                                      an in-memory store (gone when memtool exits)
  sqlite:///abs/path.db                     a SQLite file
  postgres://user@host/db                   a PostgreSQL database
  s3://bucket?region=R&prefix=P             S3 (also file+blob://, mem+blob://; gs:// and
                                            azblob:// in a build with -tags gcs,azure)
  https://host[:port][/prefix]              a memtool server (the token in $MEMTOOL_TOKEN)
The default is $MEMTOOL_STORE, else ./memories. Commands that only read
(view, history, diff, info, ...) never create a store: a store that is
not there is an error.
--tenant ID picks one tenant's memory in a multi-tenant store;
--policy FILE (default $MEMTOOL_POLICY) applies limits, secret filtering,
audit, encryption, expiry and history.

Run 'memtool help <command>' or 'memtool <command> -h' for one command.
`)
	io.WriteString(w, b.String())
}

// interruptible returns a reader of r whose Read returns ctx's error once
// ctx ends, rather than wait on: a read of stdin (a terminal, or a pipe
// whose writer lives on) does not end when a signal comes, and main takes
// SIGINT and SIGTERM, so without this Ctrl-C would not stop the wait. A
// read cut short is left running, and what it reads is dropped: the
// command is ending.
func interruptible(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	type result struct {
		n   int
		err error
	}
	buf := make([]byte, len(p)) // the abandoned read must not write into p
	done := make(chan result, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return copy(p, buf[:r.n]), r.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
