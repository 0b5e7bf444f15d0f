package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// The shell completions and the man page are generated from the flag sets
// the commands make: each command is run with --help while newFlags records
// the flag sets it makes (flagSetMade), and the one named after the command
// is its set.

var flagSetCapture struct {
	sync.Mutex
	sets []*pflag.FlagSet // nil: not capturing
}

// flagSetMade records fs while the commands' flags are being collected.
func flagSetMade(fs *pflag.FlagSet) {
	flagSetCapture.Lock()
	defer flagSetCapture.Unlock()
	if flagSetCapture.sets != nil {
		flagSetCapture.sets = append(flagSetCapture.sets, fs)
	}
}

// cmdFlags is a command (or subcommand) and its flags.
type cmdFlags struct {
	name    string // "cps", "k8s manifest"
	summary string
	fs      *pflag.FlagSet // nil: the command takes no flags
	usage   string         // its help's usage: synopsis, blank line, description
	// words are the command's first positional arguments, if it has a
	// fixed set of them (subcommands, shells, topics).
	words []string
}

// subcommands are the commands whose flags belong to a subcommand.
var subcommands = map[string][]string{"k8s": {"manifest"}}

// commandWords are the fixed first arguments of commands.
func commandWords() map[string][]string {
	return map[string][]string{
		"k8s":        {"manifest"},
		"profiles":   {"show", "suites", "groups"},
		"completion": completionShells,
		"help":       commandNameList(),
	}
}

func commandNameList() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// allCommandFlags returns every command with its flag set, in the order of
// commands(); a subcommand with flags follows its command.
func allCommandFlags() []cmdFlags {
	words := commandWords()
	var out []cmdFlags
	for _, c := range commands() {
		cf := cmdFlags{name: c.name, summary: c.summary, words: words[c.name]}
		if c.run != nil {
			cf.fs, cf.usage = capturedFlags(c.name, c.run, []string{"--help"})
		}
		out = append(out, cf)
		for _, sub := range subcommands[c.name] {
			s := cmdFlags{name: c.name + " " + sub, summary: c.summary}
			s.fs, s.usage = capturedFlags(s.name, c.run, []string{sub, "--help"})
			out = append(out, s)
		}
	}
	return out
}

// capturedFlags runs a command with args (its help) and returns the flag
// set named name that it made, if any, and its usage (the help without
// "Usage: " and the flags).
func capturedFlags(
	name string,
	run func(context.Context, []string, io.Writer, io.Writer) error,
	args []string,
) (*pflag.FlagSet, string) {
	flagSetCapture.Lock()
	flagSetCapture.sets = []*pflag.FlagSet{}
	flagSetCapture.Unlock()
	var help bytes.Buffer
	_ = run(context.Background(), args, &help, io.Discard)
	flagSetCapture.Lock()
	defer flagSetCapture.Unlock()
	sets := flagSetCapture.sets
	flagSetCapture.sets = nil
	usage, _, _ := strings.Cut(help.String(), "\n\nFlags:\n")
	usage = strings.TrimSpace(strings.TrimPrefix(usage, "Usage: "))
	for _, fs := range sets {
		if fs.Name() == name {
			return fs, usage
		}
	}
	return nil, usage
}
