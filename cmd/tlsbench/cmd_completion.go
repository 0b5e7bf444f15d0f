package main

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/target"
	"github.com/tlsbench/tlsbench/profiles"
)

const completionUsage = `tlsbench completion bash|zsh|fish

Prints the shell completion script of tlsbench, generated from the flags of
every command: commands, their flags, and the values of flags that take
names (--profile: the built-in profiles; --test: the engines; --format,
--executor, --fault) or files and directories.

  bash: source <(tlsbench completion bash)   (or save it in
        /etc/bash_completion.d/tlsbench)
  zsh:  tlsbench completion zsh > "${fpath[1]}/_tlsbench"   (then compinit)
  fish: tlsbench completion fish > ~/.config/fish/completions/tlsbench.fish`

// completionShells are the shells completion writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

func runCompletion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("completion")
	if err := parseFlags(fs, completionUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 1 {
		return usagef("want one shell: %s", strings.Join(completionShells, ", "))
	}
	script, ok := map[string]func(io.Writer, []cmdFlags) error{
		"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion,
	}[fs.Arg(0)]
	if !ok {
		return usagef("unknown shell %q (shells: %s)", fs.Arg(0), strings.Join(completionShells, ", "))
	}
	var b bytes.Buffer // the whole script, or nothing
	if err := script(&b, allCommandFlags()); err != nil {
		return err
	}
	_, err := stdout.Write(b.Bytes())
	return err
}

// valueKind is what a flag's value completes to.
type valueKind int

const (
	valueNone  valueKind = iota // a bool flag: no value
	valueAny                    // a value, not completed (a number, a URL)
	valueWords                  // one of a list of words
	valueFile
	valueDir
)

// complFlag is a flag and what its value completes to.
type complFlag struct {
	*pflag.Flag
	names []string // --name, then -s if it has one
	kind  valueKind
	words []string // the words of a valueWords flag
}

// complFlags are the flags of a command as the scripts complete them.
func complFlags(c cmdFlags) []complFlag {
	var out []complFlag
	for _, f := range flagList(c.fs) {
		k, words := flagValues(c.name, f)
		cf := complFlag{Flag: f, names: []string{"--" + f.Name}, kind: k, words: words}
		if f.Shorthand != "" {
			cf.names = append(cf.names, "-"+f.Shorthand)
		}
		out = append(out, cf)
	}
	return out
}

// readsFiles reports whether a command's arguments are files: the commands
// that read records and plans.
func readsFiles(cmd string) bool { return slices.Contains([]string{"report", "compare", "merge"}, cmd) }

// flagValues says what the value of a command's flag completes to: the
// names a flag takes, or files or directories by its usage's `FILE` or
// `DIR`.
func flagValues(cmd string, f *pflag.Flag) (valueKind, []string) {
	if f.NoOptDefVal != "" {
		return valueNone, nil
	}
	switch f.Name {
	case "profile":
		var names []string
		for _, p := range profiles.Builtin().All() {
			names = append(names, p.Name)
		}
		return valueWords, names
	case "test":
		return valueWords, []string{"cps", "throughput"}
	case "executor":
		return valueWords, []string{"local", "processes", "kubernetes"}
	case "fault":
		return valueWords, target.FaultKinds
	case "format":
		switch cmd {
		case "report":
			return valueWords, reportFormats
		case "compare":
			return valueWords, compareFormats
		case "impact":
			return valueWords, []string{"text", "md", "json", "html"}
		}
	}
	switch name, _ := pflag.UnquoteUsage(f); name {
	case "FILE":
		return valueFile, nil
	case "DIR":
		return valueDir, nil
	}
	return valueAny, nil
}

// flagList returns the flags of fs, in their order.
func flagList(fs *pflag.FlagSet) []*pflag.Flag {
	var out []*pflag.Flag
	if fs != nil {
		fs.VisitAll(func(f *pflag.Flag) { out = append(out, f) })
	}
	return out
}

// repeatable reports whether a flag may be given more than once.
func repeatable(f *pflag.Flag) bool {
	t := f.Value.Type()
	return strings.HasSuffix(t, "Array") || strings.HasSuffix(t, "Slice") || t == "engine"
}

// shortUsage is a flag's usage to its first clause, without backquotes.
func shortUsage(f *pflag.Flag) string {
	_, u := pflag.UnquoteUsage(f)
	if i := strings.IndexAny(u, "(;"); i > 0 {
		u = u[:i]
	}
	return strings.TrimSpace(u)
}

// completionScripts are the scripts' fixed text (completion/), each with
// the parts made from the flags ({{.Commands}}, {{.Cases}}, …) filled in.
//
//go:embed completion
var completionFiles embed.FS

var completionScripts = template.Must(template.ParseFS(completionFiles, "completion/*"))

// bashFiles completes file (-f) or directory (-d) names.
const bashFiles = `compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen %s -- "$cur") ) ;;`

func bashCompletion(w io.Writer, cmds []cmdFlags) error {
	var cases, values strings.Builder
	var fileCmds []string
	for _, c := range cmds {
		var flags, valflags []string
		for _, f := range complFlags(c) {
			flags = append(flags, f.names...)
			if f.kind != valueNone {
				valflags = append(valflags, f.names...)
			}
			var pats []string
			for _, n := range f.names {
				pats = append(pats, fmt.Sprintf("%q", c.name+" "+n))
			}
			pat := strings.Join(pats, "|")
			switch f.kind {
			case valueWords:
				fmt.Fprintf(&values, "        %s) COMPREPLY=( $(compgen -W %q -- \"$cur\") ) ;;\n", pat, strings.Join(f.words, " "))
			case valueFile:
				fmt.Fprintf(&values, "        %s) "+bashFiles+"\n", pat, "-f")
			case valueDir:
				fmt.Fprintf(&values, "        %s) "+bashFiles+"\n", pat, "-d")
			}
		}
		fmt.Fprintf(&cases, "    %q) flags=%q; valflags=%q; words=%q ;;\n", c.name,
			strings.Join(append(flags, "--help"), " "), " "+strings.Join(valflags, " ")+" ", strings.Join(c.words, " "))
		if readsFiles(c.name) {
			fileCmds = append(fileCmds, fmt.Sprintf("%q", c.name))
		}
	}
	return completionScripts.ExecuteTemplate(w, "tlsbench.bash", map[string]string{
		"Commands": strings.Join(commandNameList(), " "), "Cases": cases.String(), "Values": values.String(),
		"Files": fmt.Sprintf("        %s) "+bashFiles+"\n", strings.Join(fileCmds, "|"), "-f"),
	})
}

// zshQuote quotes s for zsh in single quotes.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// zshSpecs are the _arguments specs of a command's flags, --help first.
func zshSpecs(c cmdFlags, sep string) string {
	specs := []string{"'(- *)--help[print the usage]'"}
	for _, f := range complFlags(c) {
		specs = append(specs, zshSpec(f))
	}
	return strings.Join(specs, sep)
}

// zshSpec is the _arguments spec of a flag: one per name, the names
// excluding each other unless it is repeatable.
func zshSpec(f complFlag) string {
	valueName, _ := pflag.UnquoteUsage(f.Flag)
	action := ":" + strings.NewReplacer(":", `\:`, "'", "").Replace(valueName) + ":"
	switch f.kind {
	case valueNone:
		action = ""
	case valueWords:
		action += "(" + strings.Join(f.words, " ") + ")"
	case valueFile:
		action += "_files"
	case valueDir:
		action += "_files -/"
	case valueAny:
		action += " "
	}
	desc := "[" + strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(shortUsage(f.Flag)) + "]"
	excl := ""
	if repeatable(f.Flag) {
		excl = "*"
	} else if len(f.names) > 1 {
		excl = "(" + strings.Join(f.names, " ") + ")"
	}
	var specs []string
	for _, n := range f.names {
		switch {
		case f.kind == valueNone:
		case strings.HasPrefix(n, "--"):
			n += "="
		default:
			n += "+"
		}
		specs = append(specs, zshQuote(excl+n+desc+action))
	}
	return strings.Join(specs, " ")
}

func zshCompletion(w io.Writer, cmds []cmdFlags) error {
	var names, cases strings.Builder
	subs := map[string][]cmdFlags{}
	for _, c := range cmds {
		if parent, _, ok := strings.Cut(c.name, " "); ok {
			subs[parent] = append(subs[parent], c)
		} else {
			fmt.Fprintf(&names, "            %s\n", zshQuote(c.name+":"+strings.ReplaceAll(c.summary, ":", `\:`)))
		}
	}
	const next = " \\\n                " // the next spec, on a line of its own
	for _, c := range cmds {
		if strings.Contains(c.name, " ") {
			continue
		}
		fmt.Fprintf(&cases, "        %s)\n", c.name)
		if len(subs[c.name]) > 0 {
			fmt.Fprintf(&cases, "            _arguments -C %s '1:subcommand:(%s)' '*:: :->sub'\n",
				zshSpecs(c, " "), strings.Join(c.words, " "))
			cases.WriteString("            case $line[1] in\n")
			for _, s := range subs[c.name] {
				_, name, _ := strings.Cut(s.name, " ")
				fmt.Fprintf(&cases, "            %s) _arguments -s %s '*:argument: ' ;;\n", name, zshSpecs(s, next))
			}
			cases.WriteString("            esac\n")
		} else {
			rest := "'*:argument: '"
			switch {
			case len(c.words) > 0:
				rest = "'1:argument:(" + strings.Join(c.words, " ") + ")' '*:argument:_files'"
			case readsFiles(c.name):
				rest = "'*:file:_files'"
			}
			fmt.Fprintf(&cases, "            _arguments -s %s %s\n", zshSpecs(c, next), rest)
		}
		cases.WriteString("            ;;\n")
	}
	return completionScripts.ExecuteTemplate(w, "tlsbench.zsh",
		map[string]string{"Commands": names.String(), "Cases": cases.String()})
}

// fishQuote quotes s for fish in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func fishCompletion(w io.Writer, cmds []cmdFlags) error {
	var names, cases strings.Builder
	for _, c := range cmds {
		if !strings.Contains(c.name, " ") {
			fmt.Fprintf(&names, "complete -c tlsbench -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
		}
		cond := "__fish_seen_subcommand_from " + c.name
		if parent, sub, ok := strings.Cut(c.name, " "); ok {
			cond = fmt.Sprintf("__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s", parent, sub)
		} else if len(c.words) > 0 {
			// The command's fixed first arguments.
			words := strings.Join(c.words, " ")
			fmt.Fprintf(&cases, "complete -c tlsbench -n %s -a %s\n",
				fishQuote(cond+"; and not __fish_seen_subcommand_from "+words), fishQuote(words))
		}
		if readsFiles(c.name) {
			fmt.Fprintf(&cases, "complete -c tlsbench -n %s -F\n", fishQuote(cond))
		}
		for _, f := range complFlags(c) {
			fmt.Fprintf(&cases, "complete -c tlsbench -n %s -l %s", fishQuote(cond), f.Name)
			if f.Shorthand != "" {
				cases.WriteString(" -s " + f.Shorthand)
			}
			switch f.kind {
			case valueWords:
				cases.WriteString(" -x -a " + fishQuote(strings.Join(f.words, " ")))
			case valueFile:
				cases.WriteString(" -r -F")
			case valueDir:
				cases.WriteString(" -x -a '(__fish_complete_directories)'")
			case valueAny:
				cases.WriteString(" -x")
			}
			fmt.Fprintf(&cases, " -d %s\n", fishQuote(shortUsage(f.Flag)))
		}
	}
	return completionScripts.ExecuteTemplate(w, "tlsbench.fish",
		map[string]string{"Commands": names.String(), "Cases": cases.String()})
}
