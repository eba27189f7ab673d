//go:build claude

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude"
	"github.com/memtool/memtool/claude/mcptools"
	"github.com/memtool/memtool/claude/template"
	"github.com/memtool/memtool/claude/workdir"
	"github.com/memtool/memtool/storeurl"
)

// defaultModel is the model run and chat use without --model.
const defaultModel = anthropic.ModelClaudeSonnet5_5

// agentFlags are the flags run and chat share.
type agentFlags struct {
	model          string
	system         string
	maxTokens      int64
	maxIterations  int
	contextEditing bool
	clearAt        int64
	keep           int64
	compact        bool
	compactAt      int64
	topic          string
	organize       bool
	template       string
	threads        bool
	timeout        time.Duration
	retries        int
	workdir        string
	allowBash      bool
	mcpConfig      string
	search         bool
}

// Defaults of --timeout and --retries.
const (
	defaultTimeout = 10 * time.Minute
	defaultRetries = 2
)

func addAgentFlags(fs *flag.FlagSet, af *agentFlags) {
	fs.StringVar(&af.model, "model", defaultModel, "the Claude model")
	fs.StringVar(&af.system, "system", "", "the system prompt")
	fs.Int64Var(&af.maxTokens, "max-tokens", 8192, "the most tokens of one reply")
	fs.IntVar(&af.maxIterations, "max-iterations", 50, "the most API requests for one task or chat turn (0: no limit)")
	fs.BoolVar(&af.contextEditing, "context-editing", false, "clear old tool results, never memory's, once the prompt passes --clear-at tokens")
	fs.Int64Var(&af.clearAt, "clear-at", claude.DefaultClearTrigger, "with --context-editing: the prompt size, in input tokens, that starts clearing")
	fs.Int64Var(&af.keep, "keep", claude.DefaultClearKeep, "with --context-editing: how many of the latest tool uses keep their results")
	fs.BoolVar(&af.compact, "compact", false, "compact the conversation on the server once the prompt passes --compact-at tokens")
	fs.Int64Var(&af.compactAt, "compact-at", claude.DefaultCompactTrigger, "with --compact: the prompt size, in input tokens, that starts a compaction")
	fs.StringVar(&af.topic, "topic", "", "tell Claude to record only information relevant to this topic")
	fs.BoolVar(&af.organize, "organize", true, "tell Claude to keep its memory folder up to date, coherent and organized")
	fs.StringVar(&af.template, "template", "", "add the guidance of a memory template ("+strings.Join(template.Names(), ", ")+"; see 'memtool init')")
	fs.BoolVar(&af.threads, "threads", true, "send requests on server-side message threads (only new messages are sent)")
	fs.DurationVar(&af.timeout, "timeout", defaultTimeout, "give up on an API request, a streamed reply included, after this long")
	fs.IntVar(&af.retries, "retries", defaultRetries, "how many times to try a failed or timed-out API request again")
	fs.StringVar(&af.workdir, "workdir", "", "give Claude read, write, edit, glob and grep tools confined to this directory")
	fs.BoolVar(&af.allowBash, "allow-bash", false, "with --workdir, also an UNRESTRICTED bash shell (only inside a sandbox you control)")
	fs.BoolVar(&af.search, "search", false, "give Claude a memory_search tool that finds lines in its memory (see 'memtool search')")
	fs.StringVar(&af.mcpConfig, "mcp-config", "", `add the tools of the MCP servers in this file ({"mcpServers": {...}}, as Claude Desktop and Claude Code read)`)
}

// options returns the runner options the flags ask for.
func (af *agentFlags) options() ([]claude.Option, error) {
	if err := af.check(); err != nil {
		return nil, err
	}
	opts := []claude.Option{
		claude.WithMaxIterations(af.maxIterations), claude.WithThreads(af.threads),
		claude.WithRequestTimeout(af.timeout), claude.WithMaxRetries(af.retries),
	}
	if af.contextEditing {
		opts = append(opts, claude.WithClearToolUses(claude.ClearToolUses{Trigger: af.clearAt, Keep: af.keep}))
	}
	if af.compact {
		opts = append(opts, claude.WithCompaction(claude.Compaction{Trigger: af.compactAt}))
	}
	if af.organize {
		opts = append(opts, claude.WithOrganizedMemory())
	}
	if af.topic != "" {
		opts = append(opts, claude.WithTopic(af.topic))
	}
	if af.template != "" {
		t, ok := template.Lookup(af.template)
		if !ok {
			return nil, fmt.Errorf("unknown template %q (known: %s)", af.template, strings.Join(template.Names(), ", "))
		}
		opts = append(opts, claude.WithGuidance(t.Guidance))
	}
	return opts, claude.CheckOptions(opts...)
}

// check refuses numbers that the API would refuse or that would be read
// as something else, naming the flag.
func (af *agentFlags) check() error {
	switch {
	case strings.TrimSpace(af.model) == "":
		return errors.New("--model must name a model, as in --model " + defaultModel)
	case af.maxIterations < 0:
		return errors.New("--max-iterations must be 0 (no limit) or more")
	case af.maxTokens <= 0:
		return errors.New("--max-tokens must be more than 0")
	case af.clearAt <= 0:
		return errors.New("--clear-at must be more than 0 input tokens")
	case af.keep <= 0:
		return errors.New("--keep must be 1 or more: the API's context editing keeps at least one tool use")
	case af.compactAt < claude.MinCompactTrigger:
		return fmt.Errorf("--compact-at must be at least %d input tokens (the API's minimum)", claude.MinCompactTrigger)
	case af.timeout <= 0:
		return errors.New("--timeout must be more than 0")
	case af.retries < 0:
		return errors.New("--retries must be 0 or more")
	case af.allowBash && af.workdir == "":
		return errors.New("--allow-bash needs --workdir (the directory the shell starts in)")
	}
	return nil
}

// params returns the request for a conversation of messages.
func (af *agentFlags) params(messages []anthropic.BetaMessageParam) anthropic.BetaToolRunnerParams {
	p := anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
		Model:     af.model,
		MaxTokens: af.maxTokens,
		Messages:  messages,
	}}
	if af.system != "" {
		p.System = []anthropic.BetaTextBlockParam{{Text: af.system}}
	}
	return p
}

// newAPIClient returns a client that uses $ANTHROPIC_API_KEY and, when set,
// $ANTHROPIC_BASE_URL, and reads nothing else from the environment.
func newAPIClient(env *cliEnv) (anthropic.Client, error) {
	key := env.getenv("ANTHROPIC_API_KEY")
	if key == "" {
		return anthropic.Client{}, errors.New("ANTHROPIC_API_KEY is not set")
	}
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithAPIKey(key)}
	if base := env.getenv("ANTHROPIC_BASE_URL"); base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	return anthropic.NewClient(opts...), nil
}

// callPrinter prints each memory command on its own line as it finishes.
// Calls of one turn finish on several goroutines at once.
type callPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *callPrinter) print(_ context.Context, c claude.Call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "memory: %s\n", c.Summary())
}

func setupRun(fs *flag.FlagSet) runFunc {
	var af agentFlags
	addAgentFlags(fs, &af)
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if len(inv.args) != 1 {
			return inv.fail(exitUsage, `give the task as one argument: memtool run [flags] "task"`)
		}
		task := inv.args[0]
		if task == "-" {
			data, err := io.ReadAll(interruptible(ctx, env.stdin))
			switch {
			case ctx.Err() != nil:
				return inv.fail(exitInterrupted, "interrupted while reading the task from stdin")
			case err != nil:
				return inv.fail(exitUsage, "reading the task from stdin: %v", err)
			}
			task = string(data)
		}
		if strings.TrimSpace(task) == "" {
			return inv.fail(exitUsage, "the task is empty")
		}
		return runTask(ctx, inv, &af, task)
	}
}

func runTask(ctx context.Context, inv *invocation, af *agentFlags, task string) int {
	env := inv.env
	opts, client, mem, closer, code := startAgent(ctx, inv, af)
	if code != exitOK {
		return code
	}
	defer closer.Close()

	messages := []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))}
	// Streaming: replies longer than a non-streaming request allows, and no
	// idle connection for the length of a long reply.
	runner := claude.NewStreamingRunner(&client, mem, af.params(messages), opts...)
	for events := range runner.AllStreaming(ctx) {
		for _, err := range events {
			if err != nil {
				return apiFailure(ctx, env, "run", err)
			}
		}
	}
	final := runner.LastMessage()
	if text := claude.Text(final); text != "" {
		// On a terminal, escaped (termText): the model may have been led
		// by what it read (a memory, a file, a tool) to write escapes.
		if _, err := fmt.Fprintln(env.stdout, env.termText(text)); err != nil {
			return exitBrokenIO
		}
	}
	return finished(env, "run", final, runner.IterationCount())
}

// startAgent does what run and chat do before the first request: check the
// flags, make the API client and open the memory (which they may create).
// The options it returns print each memory call on stderr.
func startAgent(ctx context.Context, inv *invocation, af *agentFlags) ([]claude.Option, anthropic.Client, *memtool.Memory, io.Closer, int) {
	env := inv.env
	opts, err := af.options()
	if err != nil {
		return nil, anthropic.Client{}, nil, nil, inv.fail(exitUsage, "%v", err)
	}
	client, err := newAPIClient(env)
	if err != nil {
		return nil, anthropic.Client{}, nil, nil, inv.fail(exitUsage, "%v", err)
	}
	mem, closer, err := openMemory(ctx, env, &inv.sf, true)
	if err != nil {
		return nil, anthropic.Client{}, nil, nil, inv.fail(exitStore, "%v", err)
	}
	hands, err := af.openHands(ctx, inv, storeURL(inv.sf.store, env))
	if err != nil {
		closer.Close()
		return nil, anthropic.Client{}, nil, nil, inv.fail(exitUsage, "%v", err)
	}
	printer := &callPrinter{w: env.stderr}
	opts = append(opts, hands.opts...)
	if af.search {
		opts = append(opts, claude.WithTools(claude.NewSearchTool(mem)))
	}
	return append(opts, claude.WithOnCall(printer.print)), client, mem, closersOf{append(hands.closers, closer)}, exitOK
}

// hands are the tools besides memory that --workdir and --mcp-config ask
// for, with what closes them.
type hands struct {
	opts    []claude.Option
	closers []io.Closer
}

// openHands opens the tools of --workdir and --mcp-config. A directory
// store is read-only to the file tools, so that they cannot change memory
// past the path gate and the policies: inside the work directory, and
// holding it (the whole work directory is then read-only), however the
// paths are spelt (relative, or through a symbolic link).
func (af *agentFlags) openHands(ctx context.Context, inv *invocation, store string) (h hands, err error) {
	defer func() {
		if err != nil {
			closersOf{h.closers}.Close()
		}
	}()
	if af.workdir != "" {
		opts := &workdir.Options{AllowBash: af.allowBash}
		if dir, ok := storeurl.Dir(store); ok {
			// Absolute and resolved: the tools resolve the paths they are
			// given, and read a relative entry from the work directory.
			opts.ReadOnlyDirs = append(opts.ReadOnlyDirs, resolvedDir(dir))
		}
		t, err := workdir.Open(af.workdir, opts)
		if err != nil {
			return h, fmt.Errorf("--workdir: %w", err)
		}
		h.closers = append(h.closers, t)
		if af.allowBash {
			fmt.Fprintf(inv.env.stderr, "memtool %s: warning: --allow-bash gives Claude an unrestricted shell; --workdir does not confine it\n", inv.cmd.name)
		}
		h.opts = append(h.opts, t.Option(), claude.WithGuidance(t.Guidance()))
	}
	if af.mcpConfig != "" {
		servers, err := mcptools.Open(ctx, af.mcpConfig, &mcptools.Options{Stderr: inv.env.stderr})
		if err != nil {
			return h, fmt.Errorf("--mcp-config: %w", err)
		}
		h.closers = append(h.closers, servers)
		h.opts = append(h.opts, servers.Option())
	}
	return h, nil
}

// resolvedDir is dir made absolute, with its symbolic links resolved as
// far as it exists.
func resolvedDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// closersOf closes each of its closers, the last first.
type closersOf struct{ list []io.Closer }

func (c closersOf) Close() error {
	var errs []error
	for i := len(c.list) - 1; i >= 0; i-- {
		errs = append(errs, c.list[i].Close())
	}
	return errors.Join(errs...)
}

// apiFailure reports an error that ended a run or a chat turn, with any
// password of $ANTHROPIC_BASE_URL masked (the SDK's errors quote the URL).
func apiFailure(ctx context.Context, env *cliEnv, cmd string, err error) int {
	err = redactedError{err, env.getenv("ANTHROPIC_BASE_URL")}
	if ctx.Err() != nil {
		fmt.Fprintf(env.stderr, "memtool %s: interrupted\n", cmd)
		return exitInterrupted
	}
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(env.stderr, "memtool %s: timed out: no answer from the Claude API within --timeout: %v\n", cmd, err)
		return exitAPI
	}
	fmt.Fprintf(env.stderr, "memtool %s: %v\n", cmd, err)
	return exitAPI
}

// finished reports a run that ended without Claude finishing its answer.
func finished(env *cliEnv, cmd string, final *anthropic.BetaMessage, requests int) int {
	if final == nil {
		fmt.Fprintf(env.stderr, "memtool %s: no reply\n", cmd)
		return exitAPI
	}
	switch final.StopReason {
	case anthropic.BetaStopReasonEndTurn, anthropic.BetaStopReasonStopSequence:
		return exitOK
	case anthropic.BetaStopReasonToolUse:
		fmt.Fprintf(env.stderr, "memtool %s: stopped after %d requests (--max-iterations) before Claude finished\n", cmd, requests)
	case anthropic.BetaStopReasonMaxTokens:
		fmt.Fprintf(env.stderr, "memtool %s: the reply was cut at --max-tokens\n", cmd)
	default:
		fmt.Fprintf(env.stderr, "memtool %s: Claude stopped: %s\n", cmd, final.StopReason)
	}
	return exitFailed
}
