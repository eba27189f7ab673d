package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/memtool/memtool/claude/template"
)

func runInit(ctx context.Context, env *cliEnv, args []string) int {
	var sf storeFlags
	var name string
	var list bool
	fs := newFlagSet("init", "init [--template NAME] [--store URL]", env, &sf)
	fs.StringVar(&name, "template", "dev", "the template: "+strings.Join(template.Names(), ", "))
	fs.BoolVar(&list, "list", false, "list the templates and exit")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(rest) > 0 {
		fmt.Fprintf(env.stderr, "memtool init: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	if list {
		for _, t := range template.All() {
			fmt.Fprintf(env.stdout, "%-6s %s\n", t.Name, t.Summary)
		}
		return exitOK
	}
	t, ok := template.Lookup(name)
	if !ok {
		fmt.Fprintf(env.stderr, "memtool init: unknown template %q (known: %s)\n", name, strings.Join(template.Names(), ", "))
		return exitUsage
	}
	mem, closer, err := openMemory(env, &sf)
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool init: %v\n", err)
		return exitStore
	}
	defer closer.Close()
	seeded, err := t.Seed(ctx, mem.Store())
	for _, s := range seeded {
		if s.Created {
			fmt.Fprintf(env.stdout, "created %s\n", s.Path)
		} else {
			fmt.Fprintf(env.stdout, "kept    %s (already there)\n", s.Path)
		}
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "memtool init: %v\n", err)
		return exitFailed
	}
	store := ""
	if sf.store != "" {
		store = " --store " + redact(sf.store) // a password in the URL is masked
	}
	_, err = fmt.Fprintf(env.stdout, "\nEvery session: memtool run%s --template %s \"task\"  (or memtool chat%s --template %s)\n"+
		"--template %s gives Claude these rules:\n\n%s\n", store, t.Name, store, t.Name, t.Name, t.Guidance)
	if err != nil {
		return exitBrokenIO
	}
	return exitOK
}
