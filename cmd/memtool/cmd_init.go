package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/memtool/memtool"
	"github.com/memtool/memtool/claude/template"
	"github.com/memtool/memtool/storeurl"
)

func setupInit(fs *flag.FlagSet) runFunc {
	var name string
	var list bool
	fs.StringVar(&name, "template", "dev", "the template: "+strings.Join(template.Names(), ", "))
	fs.BoolVar(&list, "list", false, "list the templates and exit")
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		if list {
			for _, t := range template.All() {
				fmt.Fprintf(env.stdout, "%-6s %s\n", t.Name, t.Summary)
			}
			return exitOK
		}
		return runInit(ctx, inv, name)
	}
}

func runInit(ctx context.Context, inv *invocation, name string) int {
	env, sf := inv.env, &inv.sf
	t, ok := template.Lookup(name)
	if !ok {
		return inv.fail(exitUsage, "unknown template %q (known: %s)", name, strings.Join(template.Names(), ", "))
	}
	mem, closer, err := openMemory(ctx, env, sf, true)
	if err != nil {
		return inv.fail(exitStore, "%v", err)
	}
	defer closer.Close()
	seeded, err := t.Seed(ctx, mem.Store())
	var inTheWay []string // directories where a file of the template belongs
	for _, s := range seeded {
		switch {
		case s.Created:
			fmt.Fprintf(env.stdout, "created %s\n", s.Path)
		case isDir(ctx, mem.Store(), s.Path):
			inTheWay = append(inTheWay, s.Path)
		default:
			fmt.Fprintf(env.stdout, "kept    %s (already there)\n", s.Path)
		}
	}
	if err != nil {
		return inv.fail(exitFailed, "%v", err)
	}
	if len(inTheWay) > 0 {
		return inv.fail(exitFailed, "%s is a directory, where the template's file belongs; move it away and run init again", strings.Join(inTheWay, ", "))
	}
	// The flags that open this memory again: the same store, tenant and
	// policy file.
	store := ""
	if sf.store != "" {
		store = " --store " + shellWord(storeurl.Redact(sf.store)) // a password in the URL is masked
	}
	if sf.tenant != "" {
		store += " --tenant " + shellWord(sf.tenant)
	}
	if sf.policy != "" {
		store += " --policy " + shellWord(sf.policy)
	}
	_, err = fmt.Fprintf(env.stdout, "\nEvery session: memtool run%s --template %s \"task\"  (or memtool chat%s --template %s)\n"+
		"--template %s gives Claude these rules:\n\n%s\n", store, t.Name, store, t.Name, t.Name, t.Guidance)
	if err != nil {
		return exitBrokenIO
	}
	return exitOK
}

// isDir reports whether the virtual path p is a directory in store.
func isDir(ctx context.Context, store memtool.Store, p string) bool {
	name, _, err := memtool.CleanPath(p)
	if err != nil {
		return false
	}
	fi, err := store.Stat(ctx, name)
	return err == nil && fi.IsDir()
}

// shellWord is s as one word of a POSIX shell command line: as it is when
// the shell would take it so, else in single quotes.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
