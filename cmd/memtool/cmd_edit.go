package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memtool/memtool"
)

// The six memory commands, one verb each: view, create, str_replace,
// insert, delete, rename. view only reads, and so never creates a store.

// textArg returns --text if set, else all of stdin. On a terminal it says
// first that it waits for the text. A signal (ctx ending) stops the wait:
// the text may be cut short, so nothing is written.
func textArg(ctx context.Context, inv *invocation, text *stringFlag) (string, error) {
	if text.set {
		return text.value, nil
	}
	env := inv.env
	if env.stdinTerminal {
		fmt.Fprintf(env.stderr, "memtool %s: reading the text from stdin; end it with Ctrl-D (or give --text)\n", inv.cmd.name)
	}
	b, err := io.ReadAll(io.LimitReader(interruptible(ctx, env.stdin), memtool.MaxInputBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > memtool.MaxInputBytes {
		return "", fmt.Errorf("stdin is larger than %d bytes", memtool.MaxInputBytes)
	}
	return string(b), nil
}

// textError reports why textArg gave no text: a signal, or stdin that
// could not be read or was too long.
func textError(ctx context.Context, inv *invocation, err error) int {
	if ctx.Err() != nil {
		return inv.fail(exitInterrupted, "interrupted while reading the text from stdin; nothing was changed")
	}
	return inv.usageError("%v", err)
}

// checkEditText refuses text for an edit (insert's text, str_replace's
// --new) that is not UTF-8: the model's edits cannot carry such bytes
// (its JSON input decodes them as U+FFFD), and a file they made invalid
// could not be edited by the model again (Memory edits only UTF-8 files).
// create stores its text as given, an image say, as the model's create
// cannot.
func checkEditText(inv *invocation, what, text string) (int, bool) {
	if utf8.ValidString(text) {
		return exitOK, true
	}
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return inv.usageError("%s is not valid UTF-8 (byte %d), and an edit keeps a file UTF-8; nothing was changed", what, i), false
}

// stringFlag records whether a string flag was given.
type stringFlag struct {
	set   bool
	value string
}

func (f *stringFlag) String() string     { return f.value }
func (f *stringFlag) Set(v string) error { f.set, f.value = true, v; return nil }

func setupView(fs *flag.FlagSet) runFunc {
	rng := fs.String("range", "", "lines START,END to show (END -1: to the end)")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		cmd := &memtool.View{Path: inv.args[0]}
		if *rng != "" {
			a, b, ok := strings.Cut(*rng, ",")
			start, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
			end, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
			if !ok || err1 != nil || err2 != nil {
				return inv.usageError("--range wants START,END, as in 1,20 or 5,-1")
			}
			cmd.ViewRange = &[2]int64{start, end}
		}
		return runOne(ctx, inv, cmd, false)
	}
}

func setupCreate(fs *flag.FlagSet) runFunc {
	var text stringFlag
	fs.Var(&text, "text", "the file's text (default: read stdin)")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		body, err := textArg(ctx, inv, &text)
		if err != nil {
			return textError(ctx, inv, err)
		}
		return runOne(ctx, inv, &memtool.Create{Path: inv.args[0], FileText: body}, true)
	}
}

func setupStrReplace(fs *flag.FlagSet) runFunc {
	var oldStr, newStr stringFlag
	fs.Var(&oldStr, "old", "the exact text to replace (must occur once)")
	fs.Var(&newStr, "new", "the replacement (default: empty)")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if !oldStr.set {
			return inv.usageError("%s", inv.cmd.args.want)
		}
		if code, ok := checkEditText(inv, "--new", newStr.value); !ok {
			return code
		}
		return runOne(ctx, inv, &memtool.StrReplace{Path: inv.args[0], OldStr: oldStr.value, NewStr: newStr.value}, true)
	}
}

func setupInsert(fs *flag.FlagSet) runFunc {
	var text stringFlag
	fs.Var(&text, "text", "the text to insert (default: read stdin)")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		line, err := strconv.ParseInt(inv.args[1], 10, 64)
		if err != nil {
			return inv.usageError("LINE must be a whole number (0: before the first line)")
		}
		body, err := textArg(ctx, inv, &text)
		if err != nil {
			return textError(ctx, inv, err)
		}
		if code, ok := checkEditText(inv, "the text", body); !ok {
			return code
		}
		return runOne(ctx, inv, &memtool.Insert{Path: inv.args[0], InsertLine: line, InsertText: body}, true)
	}
}

func setupDelete(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		return runOne(ctx, inv, &memtool.Delete{Path: inv.args[0]}, true)
	}
}

func setupRename(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		return runOne(ctx, inv, &memtool.Rename{OldPath: inv.args[0], NewPath: inv.args[1]}, true)
	}
}
