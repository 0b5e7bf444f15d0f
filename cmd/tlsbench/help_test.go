package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// namedCommands matches "tlsbench WORD" in help and messages.
var namedCommands = regexp.MustCompile(`tlsbench ([a-z][a-z0-9-]*)`)

// checkHints fails when text names a tlsbench command that does not exist.
func checkHints(t *testing.T, what, text string) {
	t.Helper()
	for _, m := range namedCommands.FindAllStringSubmatch(text, -1) {
		word := m[1]
		if word == "benchmarks" { // "tlsbench benchmarks devices …"
			continue
		}
		if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == word }) {
			t.Errorf("%s names a command that does not exist: %q", what, m[0])
		}
	}
}

// TestHelp: --help on every command prints to stdout and exits 0; help CMD
// is the same; an unknown topic exits 2; --version prints the version; no
// help names a command that does not exist.
func TestHelp(t *testing.T) {
	ctx := context.Background()
	for _, c := range commands() {
		code, stdout, stderr := invoke(t, ctx, c.name, "--help")
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "Usage") && c.name != "help" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", c.name, code, stdout, stderr)
		}
		checkHints(t, c.name+" --help", stdout)
		code2, stdout2, _ := invoke(t, ctx, "help", c.name)
		if code2 != exitOK || stdout2 != stdout {
			t.Errorf("help %s: exit %d, output differs from %s --help", c.name, code2, c.name)
		}
	}
	code, stdout, _ := invoke(t, ctx, "--help")
	if code != exitOK || !strings.Contains(stdout, "tlsbench help COMMAND") {
		t.Errorf("--help: exit %d: %q", code, stdout)
	}
	checkHints(t, "--help", stdout)
	if code, stdout, stderr := invoke(t, ctx); code != exitBadUsage || stdout != "" || !strings.Contains(stderr, "Usage: tlsbench COMMAND") {
		t.Errorf("no command: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := invoke(t, ctx, "help", "frob"); code != exitBadUsage || !strings.Contains(stderr, `unknown topic "frob"`) {
		t.Errorf("help frob: exit %d, %q", code, stderr)
	}
	for _, v := range []string{"--version", "version"} {
		if code, stdout, _ := invoke(t, ctx, v); code != exitOK || stdout != "tlsbench "+version+"\n" {
			t.Errorf("%s: exit %d, %q", v, code, stdout)
		}
	}
}

// TestHelpNested: help takes a command's subcommands as --help does
// (help k8s manifest was refused while help k8s worked).
func TestHelpNested(t *testing.T) {
	ctx := context.Background()
	code, stdout, stderr := invoke(t, ctx, "help", "k8s", "manifest")
	code2, stdout2, _ := invoke(t, ctx, "k8s", "manifest", "--help")
	if code != exitOK || stderr != "" || stdout != stdout2 || code2 != exitOK ||
		!strings.Contains(stdout, "tlsbench k8s manifest") {
		t.Errorf("help k8s manifest: exit %d, stderr %q, output differs from k8s manifest --help: %q", code, stderr, stdout)
	}
}
