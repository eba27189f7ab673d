package memtool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Defaults of Options.
const (
	DefaultMaxFileSize  = 1 << 20  // largest file a command may write
	DefaultMaxReadSize  = 16 << 20 // largest stored file memtool reads
	DefaultMaxViewChars = 16000    // longest view or error text, in characters
	DefaultMaxImageSize = 5 << 20  // largest image returned as an image block
	MaxLines            = 999999   // most lines a viewed file may have
)

// Options configure a Memory. The zero value (or nil) means the defaults.
type Options struct {
	// Overwrite lets create replace an existing regular file (off: create
	// fails with "already exists"). Directories are never replaced.
	Overwrite bool
	// MaxFileSize is the largest file, in bytes, a command may write: create,
	// or the result of an edit. Default DefaultMaxFileSize.
	MaxFileSize int64
	// MaxReadSize is the largest stored file, in bytes, that view and edits
	// read into memory. Default DefaultMaxReadSize.
	MaxReadSize int64
	// MaxViewChars caps view output and the text of a failure, in
	// characters (code points). Default DefaultMaxViewChars.
	MaxViewChars int
	// MaxImageSize is the largest image, in bytes, view returns as an image
	// block. Default DefaultMaxImageSize.
	MaxImageSize int64
	// Logger receives unexpected store failures with their detail (the model
	// only learns that an internal error happened). Default slog.Default().
	Logger *slog.Logger
}

// Memory runs the memory tool's six commands against a Store. It is safe for
// concurrent use: the Anthropic SDKs run one turn's tool calls in parallel.
type Memory struct {
	store Store
	opts  Options
	// writes orders the multi-step fallbacks used when the store lacks
	// Renamer or RemoveAller against every other change: a fallback holds
	// it alone, every other command that changes the store shares it.
	writes sync.RWMutex
	// noRename and noRemoveAll are set when the store, which claims the
	// capability (see Has), answered ErrUnsupported: from then on the
	// command takes writes alone.
	noRename, noRemoveAll atomic.Bool
}

// New returns a Memory over store. opts may be nil.
func New(store Store, opts *Options) *Memory {
	m := &Memory{store: store}
	if opts != nil {
		m.opts = *opts
	}
	orDefault(&m.opts.MaxFileSize, DefaultMaxFileSize)
	orDefault(&m.opts.MaxReadSize, DefaultMaxReadSize)
	orDefault(&m.opts.MaxViewChars, DefaultMaxViewChars)
	orDefault(&m.opts.MaxImageSize, DefaultMaxImageSize)
	if m.opts.Logger == nil {
		m.opts.Logger = slog.Default()
	}
	return m
}

// The answers for a path that names nothing: view, create, str_replace
// and insert say the first (as the reference handler does), delete and
// rename the second.
const (
	missingPath      = "The path %s does not exist. Please provide a valid path."
	missingPathShort = "The path %s does not exist"
)

// stat returns the store's FileInfo for name, refusing a missing entry
// with the answer missing (one of the constants above) about shown, the
// path as the model wrote it.
func (m *Memory) stat(ctx context.Context, name, missing, shown string) (FileInfo, error) {
	fi, err := m.store.Stat(ctx, name)
	if errors.Is(err, ErrNotExist) {
		return fi, refusef(missing, shown)
	}
	return fi, err
}

// orDefault sets a limit left at zero (or made negative) to its default.
func orDefault[T int | int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Store returns the store Memory runs on.
func (m *Memory) Store() Store { return m.store }

// Options returns the options Memory runs with, defaults filled in: what
// a caller describing its commands (such as an MCP server's tool list)
// must say, for instance whether create overwrites.
func (m *Memory) Options() Options { return m.opts }

// Hidden reports whether view's listings and search leave out an entry of
// this base name: it starts with '.', or is node_modules.
func Hidden(base string) bool { return hiddenName(base) }

// Run parses one tool input and executes it.
func (m *Memory) Run(ctx context.Context, input []byte) Result {
	cmd, err := ParseCommand(input)
	if err != nil {
		return m.capError(errorResult(err.Error()))
	}
	return m.Execute(ctx, cmd)
}

// Execute runs one command. A failed command is a Result with IsError set
// and changes nothing; Execute itself never fails. A panic in the store
// while the command runs is recovered, logged with its stack, and answered
// as an error that says the change may or may not have been made.
func (m *Memory) Execute(ctx context.Context, cmd Command) Result {
	return m.capError(m.execute(ctx, cmd))
}

// NotStarted is Execute's answer to cmd when its context had already
// ended with err (ctx.Err()): the command did not start, and nothing was
// changed. A caller that must tell such an answer from one of a command
// that ran compares with it.
func NotStarted(cmd Command, err error) Result {
	if errors.Is(err, context.DeadlineExceeded) {
		// Its deadline passed while it waited to start (behind the
		// calls of its turn that it follows, say).
		return errorResult(fmt.Sprintf("The %s command on %s did not finish in time (it had not started); nothing was changed", cmd.Name(), cmd.Target()))
	}
	return errorResult(fmt.Sprintf("The %s command was cancelled before it ran", cmd.Name()))
}

func (m *Memory) execute(ctx context.Context, cmd Command) Result {
	if err := ctx.Err(); err != nil {
		return NotStarted(cmd, err)
	}
	r, err := m.locked(ctx, cmd)
	if errors.Is(err, errRetryAlone) {
		r, err = m.locked(ctx, cmd) // lock now takes writes alone
	}
	if err != nil {
		return m.failure(ctx, cmd, err)
	}
	return r
}

// errRetryAlone: a rename or delete that held writes shared found that the
// store lacks the capability after all; it changed nothing, and runs again
// holding writes alone.
var errRetryAlone = errors.New("retry holding the write lock alone")

// locked runs cmd holding m.writes as lock says.
func (m *Memory) locked(ctx context.Context, cmd Command) (r Result, err error) {
	unlock, alone := m.lock(cmd)
	defer unlock()
	defer func() {
		// Before the unlock above. A store's bug ends this command, not
		// the process and every other call in flight (a turn's, a
		// server's other tenants'): the Store contract keeps a store
		// usable after a panic in Update's fn, and this holds Memory to
		// the same.
		if v := recover(); v != nil {
			r, err = Result{}, &panicked{value: v, stack: debug.Stack()}
		}
	}()
	switch c := cmd.(type) {
	case *View:
		r, err = m.view(ctx, c)
	case *Create:
		r, err = m.create(ctx, c)
	case *StrReplace:
		r, err = m.strReplace(ctx, c)
	case *Insert:
		r, err = m.insert(ctx, c)
	case *Delete:
		r, err = m.delete(ctx, c, alone)
	case *Rename:
		r, err = m.rename(ctx, c, alone)
	default:
		return errorResult(fmt.Sprintf("Unknown command: %s", cmd.Name())), nil
	}
	return r, err
}

// failure turns err into the model's error text: refusals and path errors
// as they are, anything else as a generic internal error, logged in full.
func (m *Memory) failure(ctx context.Context, cmd Command, err error) Result {
	var ref Refusal
	var pe *PathError
	switch {
	case errors.As(err, new(*partialError)):
		// First: a refusal that stopped a fallback part way says that
		// nothing was changed, and part was.
		return errorResult(fmt.Sprintf("The %s command on %s was done only in part: the memory store failed part way. View %s before trying again", cmd.Name(), cmd.Target(), cmd.Target()))
	case errors.As(err, &ref):
		return errorResult(string(ref))
	case errors.As(err, &pe):
		return errorResult(pe.Reason)
	case errors.Is(err, ErrEscapes):
		return errorResult("Path would escape " + Root + " directory via symlink")
	case errors.As(err, new(*panicked)):
		m.opts.Logger.ErrorContext(ctx, "memtool: panic while running a command", "command", cmd.Name(), "path", cmd.Target(), "err", err)
		if _, ok := cmd.(*View); ok {
			break // a view changes nothing: the generic text below
		}
		// The panic may have come after the store made the change.
		return errorResult(fmt.Sprintf("The %s command on %s failed inside memtool (an internal error); it may or may not have been made. View %s before trying again", cmd.Name(), cmd.Target(), cmd.Target()))
	case errors.Is(err, ErrOutcomeUnknown):
		// Before the context's errors: a lost answer may come with one.
		return errorResult(fmt.Sprintf("The %s command on %s may or may not have been made: the memory store's answer was lost. View %s before trying again", cmd.Name(), cmd.Target(), cmd.Target()))
	case errors.Is(err, ErrBusy):
		return errorResult(fmt.Sprintf("The memory store is busy (another process holds it); the %s command on %s changed nothing. Try again", cmd.Name(), cmd.Target()))
	case errors.Is(err, context.DeadlineExceeded):
		return errorResult(fmt.Sprintf("The %s command on %s did not finish in time (the memory store did not answer); nothing was changed", cmd.Name(), cmd.Target()))
	case errors.Is(err, context.Canceled):
		return errorResult(fmt.Sprintf("The %s command on %s was cancelled; nothing was changed", cmd.Name(), cmd.Target()))
	case errors.Is(err, ErrNoSpace):
		return errorResult(fmt.Sprintf("No space left in the memory store; the %s command on %s changed nothing. Deleting files may free space", cmd.Name(), cmd.Target()))
	case errors.Is(err, ErrReadOnly):
		return errorResult(fmt.Sprintf("The memory store is read-only; the %s command on %s changed nothing", cmd.Name(), cmd.Target()))
	}
	if !errors.As(err, new(*panicked)) {
		m.opts.Logger.ErrorContext(ctx, "memtool: store failure", "command", cmd.Name(), "path", cmd.Target(), "err", err)
	}
	return errorResult(fmt.Sprintf("Internal error while running %s on %s", cmd.Name(), cmd.Target()))
}

// success is the result of a command that succeeded: text for the model,
// and no error for execute to map.
func success(text string) (Result, error) { return Result{Text: text}, nil }

// lock takes m.writes as cmd needs it and returns its unlock and whether
// it holds writes alone: alone for a rename or delete that will run a
// fallback, shared for any other change, not at all for a view. So within
// one Memory no write lands in a tree while a fallback copies or removes
// it, nor between its steps.
func (m *Memory) lock(cmd Command) (unlock func(), alone bool) {
	switch c := cmd.(type) {
	case *View:
		return func() {}, false
	case *Rename:
		alone = !Has[Renamer](m.store) || m.noRename.Load()
		if !alone && renameGrows(c) {
			// Its walk of the tree (movedPathsFit) and its move are
			// one step for every other change through this Memory.
			m.writes.Lock()
			return m.writes.Unlock, false
		}
	case *Delete:
		alone = !Has[RemoveAller](m.store) || m.noRemoveAll.Load()
	}
	if alone {
		m.writes.Lock()
		return m.writes.Unlock, true
	}
	m.writes.RLock()
	return m.writes.RUnlock, false
}
