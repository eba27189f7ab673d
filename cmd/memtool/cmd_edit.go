package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/memtool/memtool"
)

// textArg returns --text if set, else all of stdin.
func textArg(env *cliEnv, set bool, text string) (string, error) {
	if set {
		return text, nil
	}
	b, err := io.ReadAll(io.LimitReader(env.stdin, memtool.MaxInputBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > memtool.MaxInputBytes {
		return "", fmt.Errorf("stdin is larger than %d bytes", memtool.MaxInputBytes)
	}
	return string(b), nil
}

// stringFlag records whether a string flag was given.
type stringFlag struct {
	set   bool
	value string
}

func (f *stringFlag) String() string     { return f.value }
func (f *stringFlag) Set(v string) error { f.set, f.value = true, v; return nil }

func usageError(env *cliEnv, name, msg string) int {
	fmt.Fprintf(env.stderr, "memtool %s: %s (run 'memtool %s -h')\n", name, msg, name)
	return exitUsage
}

func runView(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var rng string
	fs := newFlagSet("view", "view [--store URL] [--range START,END] PATH", env, &sf)
	fs.StringVar(&rng, "range", "", "lines START,END to show (END -1: to the end)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		return usageError(env, "view", "want one PATH")
	}
	cmd := &memtool.View{Path: pos[0]}
	if rng != "" {
		a, b, ok := strings.Cut(rng, ",")
		start, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		end, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return usageError(env, "view", "--range wants START,END, as in 1,20 or 5,-1")
		}
		cmd.ViewRange = &[2]int64{start, end}
	}
	return runOne(ctx, env, &sf, cmd)
}

func runCreate(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var text stringFlag
	fs := newFlagSet("create", "create [--store URL] [--overwrite] [--text TEXT] PATH  (text from stdin without --text)", env, &sf)
	fs.Var(&text, "text", "the file's text (default: read stdin)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		return usageError(env, "create", "want one PATH")
	}
	body, err := textArg(env, text.set, text.value)
	if err != nil {
		return usageError(env, "create", err.Error())
	}
	return runOne(ctx, env, &sf, &memtool.Create{Path: pos[0], FileText: body})
}

func runStrReplace(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var oldStr, newStr stringFlag
	fs := newFlagSet("str_replace", "str_replace [--store URL] --old TEXT [--new TEXT] PATH", env, &sf)
	fs.Var(&oldStr, "old", "the exact text to replace (must occur once)")
	fs.Var(&newStr, "new", "the replacement (default: empty)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 || !oldStr.set {
		return usageError(env, "str_replace", "want --old TEXT and one PATH")
	}
	return runOne(ctx, env, &sf, &memtool.StrReplace{Path: pos[0], OldStr: oldStr.value, NewStr: newStr.value})
}

func runInsert(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var text stringFlag
	fs := newFlagSet("insert", "insert [--store URL] [--text TEXT] PATH LINE  (text from stdin without --text)", env, &sf)
	fs.Var(&text, "text", "the text to insert (default: read stdin)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 2 {
		return usageError(env, "insert", "want PATH and LINE")
	}
	line, err := strconv.ParseInt(pos[1], 10, 64)
	if err != nil {
		return usageError(env, "insert", "LINE must be a whole number (0: before the first line)")
	}
	body, err := textArg(env, text.set, text.value)
	if err != nil {
		return usageError(env, "insert", err.Error())
	}
	return runOne(ctx, env, &sf, &memtool.Insert{Path: pos[0], InsertLine: line, InsertText: body})
}

func runDelete(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	fs := newFlagSet("delete", "delete [--store URL] PATH", env, &sf)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		return usageError(env, "delete", "want one PATH")
	}
	return runOne(ctx, env, &sf, &memtool.Delete{Path: pos[0]})
}

func runRename(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	fs := newFlagSet("rename", "rename [--store URL] OLD_PATH NEW_PATH", env, &sf)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 2 {
		return usageError(env, "rename", "want OLD_PATH and NEW_PATH")
	}
	return runOne(ctx, env, &sf, &memtool.Rename{OldPath: pos[0], NewPath: pos[1]})
}
