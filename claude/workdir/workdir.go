// Package workdir gives Claude hands next to its memory: the Anthropic
// SDK's own agent tools (package tools/agenttoolset of
// github.com/anthropics/anthropic-sdk-go/v2), confined to one work
// directory, ready to run beside the memory tool.
//
// The file tools are read, write, edit, glob and grep. They resolve every
// path against the work directory and refuse any path that leads outside
// it, symbolic links included (the SDK resolves them before it checks), so
// a model that writes "../x" or "/etc/x" gets an error result and nothing
// is written. The SDK checks a path and then uses it by name, so another
// process that swaps a directory of the work directory for a link between
// the two can still lead a tool outside: keep other writers out of the
// work directory while the tools run, or run them in a sandbox.
//
// # bash
//
// The bash tool runs an unrestricted /bin/bash that starts in the work
// directory but can read, change and delete anything the process may, and
// reach the network. It is added only when Options.AllowBash is set. Give
// it only to a model working inside a sandbox you control (a container or
// a throwaway virtual machine); the work directory is not a boundary for
// it. Its shell gets no ANTHROPIC_* variables unless Options.BashEnv says
// otherwise.
//
// # Use
//
//	hands, err := workdir.Open("./project", nil)
//	if err != nil { … }
//	defer hands.Close()
//	runner := claude.NewRunner(&client, mem, params, hands.Option(), claude.WithGuidance(hands.Guidance()))
//
// Through claude's runners, the calls of one turn to these tools run one at
// a time in the order the model wrote them (a write and then an edit of one
// file work as meant), beside the memory tool's calls, which keep their own
// order (package claude, Concurrency). With your own loop, declare them with
// claude.DeclareTools and answer their calls with claude.RunTools, which
// also runs them in the model's order.
//
// Keep the memory store outside the work directory, or list it in
// Options.ReadOnlyDirs: otherwise the file tools reach the store's files
// past memtool's path gate and policies.
package workdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/tools/agenttoolset"

	"github.com/memtool/memtool/claude"
)

// Options configure Open. The zero value gives the five file tools.
type Options struct {
	// AllowBash adds the bash tool, which is not confined to the work
	// directory: see the package doc before setting it.
	AllowBash bool
	// BashEnv, if non-nil, is the whole environment of the bash shell;
	// nil means the process's environment without its ANTHROPIC_*
	// variables. Do not copy os.Environ into it: that hands the API key to
	// the model's shell.
	BashEnv map[string]string
	// ReadOnlyDirs are directories inside the work directory that write
	// and edit refuse to change (read, glob and grep still see them). A
	// relative one is taken from the work directory, not from the current
	// directory: pass an absolute path for one named from elsewhere.
	ReadOnlyDirs []string
	// MaxFileBytes caps the size of a file that read and edit load whole:
	// 0 is the SDK's default (256 KiB); negative is invalid.
	MaxFileBytes int64
}

// Tools are the agent tools of one work directory. Close them when the
// run is over: bash keeps a shell open between calls.
type Tools struct {
	dir   string
	tools []anthropic.BetaTool
}

// Open returns the agent tools confined to dir, which must be an existing
// directory; relative dir is taken from the current directory. nil opts
// means the zero Options.
func Open(dir string, opts *Options) (*Tools, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.MaxFileBytes < 0 {
		return nil, fmt.Errorf("workdir: MaxFileBytes %d: cannot be negative", opts.MaxFileBytes)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workdir: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workdir: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workdir: %s: %w", dir, errNotDir)
	}
	env := &agenttoolset.AgentToolContext{
		Workdir:       abs,
		ReadOnlyRoots: absAll(abs, opts.ReadOnlyDirs),
		MaxFileBytes:  opts.MaxFileBytes,
		Env:           opts.BashEnv,
	}
	tools := []anthropic.BetaTool{
		agenttoolset.BetaReadTool(env),
		guardWrite(abs, agenttoolset.BetaWriteTool(env)),
		agenttoolset.BetaEditTool(env),
		agenttoolset.BetaGlobTool(env),
		guardGrep(abs, agenttoolset.BetaGrepTool(env)),
	}
	if opts.AllowBash {
		tools = append(tools, agenttoolset.BetaBashTool(env))
	}
	return &Tools{dir: abs, tools: tools}, nil
}

var errNotDir = errors.New("not a directory")

// absAll makes each of dirs absolute, a relative one taken from the work
// directory base.
func absAll(base string, dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		out = append(out, filepath.Clean(d))
	}
	return out
}

// Dir returns the work directory, absolute.
func (t *Tools) Dir() string { return t.dir }

// Tools returns the tools, for a runner you build yourself or for
// claude.DeclareTools and claude.RunTools.
func (t *Tools) Tools() []anthropic.BetaTool { return t.tools }

// Option gives the tools to claude.NewRunner or claude.NewStreamingRunner
// (claude.WithTools).
func (t *Tools) Option() claude.Option { return claude.WithTools(t.tools...) }

// Guidance is a system-prompt addition that tells the model what the tools
// are for; pass it to claude.WithGuidance.
func (t *Tools) Guidance() string {
	g := "Besides your memory, you have a work directory. Use the read, write, edit, glob and grep tools " +
		"for the files of the task, with paths relative to the work directory; they cannot reach outside it. " +
		"Keep notes about your progress in memory, and the work itself in the work directory."
	if t.hasBash() {
		g += " The bash tool runs shell commands in the work directory; use it to build and test the work."
	}
	return g
}

func (t *Tools) hasBash() bool {
	for _, tool := range t.tools {
		if tool.Name() == "bash" {
			return true
		}
	}
	return false
}

// Close ends the bash shell, if one was started. The file tools hold
// nothing open.
func (t *Tools) Close() error {
	agenttoolset.CloseAll(t.tools)
	return nil
}
