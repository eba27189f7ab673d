package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// completionAbout is the help of completion, beside its usage line.
const completionAbout = `The script completes the commands, and each command's flags, from the
command table of this memtool. To use it:
  bash   source <(memtool completion bash)          (in ~/.bashrc)
  zsh    memtool completion zsh > "${fpath[1]}/_memtool"
  fish   memtool completion fish > ~/.config/fish/completions/memtool.fish`

func setupCompletion(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *cliEnv, inv *invocation) int {
		write, ok := completionScripts[inv.args[0]]
		if !ok {
			return inv.usageError("unknown shell %q: want bash, zsh or fish", inv.args[0])
		}
		var b strings.Builder
		write(&b, completionTable())
		return writeOut(env, b.String())
	}
}

// A completedCommand is what a completion script knows of one verb.
type completedCommand struct {
	names   []string // the name, then the aliases
	summary string
	flags   []completedFlag
}

type completedFlag struct {
	name, usage string
	takesValue  bool
}

// completionTable reads the command table: every verb and its flags.
func completionTable() []completedCommand {
	var out []completedCommand
	for _, c := range commands() {
		fs, _ := c.flagSet(&invocation{cmd: c, env: &cliEnv{}})
		cc := completedCommand{names: append([]string{c.name}, c.aliases...), summary: c.summary}
		fs.VisitAll(func(f *flag.Flag) {
			b, isBool := f.Value.(interface{ IsBoolFlag() bool })
			cc.flags = append(cc.flags, completedFlag{name: f.Name, usage: f.Usage, takesValue: !isBool || !b.IsBoolFlag()})
		})
		out = append(out, cc)
	}
	return out
}

var completionScripts = map[string]func(io.Writer, []completedCommand){
	"bash": bashCompletion,
	"zsh":  zshCompletion,
	"fish": fishCompletion,
}

func allNames(cmds []completedCommand) string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.names...)
	}
	return strings.Join(append(names, "help"), " ")
}

func bashCompletion(w io.Writer, cmds []completedCommand) {
	fmt.Fprintf(w, `# bash completion for memtool; made by: memtool completion bash
_memtool() {
	local cur=${COMP_WORDS[COMP_CWORD]} commands=%q flags=""
	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		return
	fi
	case ${COMP_WORDS[1]} in
	help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
`, allNames(cmds))
	for _, c := range cmds {
		var flags []string
		for _, f := range c.flags {
			flags = append(flags, "--"+f.name)
		}
		fmt.Fprintf(w, "\t%s) flags=%q ;;\n", strings.Join(c.names, "|"), strings.Join(append(flags, "--help"), " "))
	}
	fmt.Fprint(w, `	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _memtool memtool
`)
}

// zshQuote quotes s as one single-quoted zsh word.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func zshCompletion(w io.Writer, cmds []completedCommand) {
	fmt.Fprint(w, "#compdef memtool\n# zsh completion for memtool; made by: memtool completion zsh\n_memtool() {\n\tlocal -a commands\n\tcommands=(\n")
	for _, c := range cmds {
		for _, n := range c.names {
			fmt.Fprintf(w, "\t\t%s\n", zshQuote(n+":"+c.summary))
		}
	}
	fmt.Fprint(w, "\t\t'help:show the help of a command'\n\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe 'command' commands\n\t\treturn\n\tfi\n\tcase $words[2] in\n\thelp) _describe 'command' commands ;;\n")
	// In an _arguments spec, the description is in brackets.
	brackets := strings.NewReplacer("[", "(", "]", ")")
	for _, c := range cmds {
		fmt.Fprintf(w, "\t%s)\n\t\t_arguments \\\n", strings.Join(c.names, "|"))
		for _, f := range c.flags {
			spec := "--" + f.name + "[" + brackets.Replace(f.usage) + "]"
			if f.takesValue {
				spec += ":" + f.name + ":_files"
			}
			fmt.Fprintf(w, "\t\t\t%s \\\n", zshQuote(spec))
		}
		fmt.Fprint(w, "\t\t\t'*:argument:_files' ;;\n")
	}
	fmt.Fprint(w, "\tesac\n}\ncompdef _memtool memtool\n")
}

// fishQuote quotes s as one fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func fishCompletion(w io.Writer, cmds []completedCommand) {
	fmt.Fprint(w, "# fish completion for memtool; made by: memtool completion fish\ncomplete -c memtool -f\n")
	fmt.Fprint(w, "complete -c memtool -n __fish_use_subcommand -a help -d 'show the help of a command'\n")
	fmt.Fprintf(w, "complete -c memtool -n '__fish_seen_subcommand_from help' -a %s\n", fishQuote(allNames(cmds)))
	for _, c := range cmds {
		for _, n := range c.names {
			fmt.Fprintf(w, "complete -c memtool -n __fish_use_subcommand -a %s -d %s\n", n, fishQuote(c.summary))
		}
		seen := fishQuote("__fish_seen_subcommand_from " + strings.Join(c.names, " "))
		for _, f := range c.flags {
			req := ""
			if f.takesValue {
				req = " -r -F"
			}
			fmt.Fprintf(w, "complete -c memtool -n %s -l %s -d %s%s\n", seen, f.name, fishQuote(f.usage), req)
		}
		fmt.Fprintf(w, "complete -c memtool -n %s -F\n", seen)
	}
}
