package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlsbench/tlsbench/profiles"
)

// completionScript writes the script of a shell to a file and returns it.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	code, stdout, stderr := invoke(t, context.Background(), "completion", shell)
	if code != exitOK || stderr != "" {
		t.Fatalf("completion %s: exit %d: %s", shell, code, stderr)
	}
	file := filepath.Join(t.TempDir(), "tlsbench."+shell)
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func needShell(t *testing.T, shell string) string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed (Debian package %s)", shell, shell)
	}
	return path
}

func builtinProfileNames() []string {
	var names []string
	for _, p := range profiles.Builtin().All() {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// longFlags are the long flags of a command, and --help, sorted.
func longFlags(c cmdFlags) []string {
	out := []string{"--help"}
	for _, f := range flagList(c.fs) {
		out = append(out, "--"+f.Name)
	}
	slices.Sort(out)
	return out
}

// TestCompletionBash loads the bash script in a real bash and completes,
// as bash does on TAB (COMP_WORDS, COMP_CWORD, the function complete -p
// names): commands, every command's flags (against its flag set), profile
// names, engines, formats, subcommands and shells.
func TestCompletionBash(t *testing.T) {
	bash := needShell(t, "bash")
	script := completionScript(t, "bash")
	type tc struct {
		words []string // the command line, the last word the one completed
		want  []string // sorted
	}
	cases := []tc{
		{[]string{"tlsbench", "c"}, []string{"calibrate", "collect", "compare", "completion", "cps"}},
		{[]string{"tlsbench", ""}, sorted(commandNameList())},
		{[]string{"tlsbench", "cps", "--profile", ""}, builtinProfileNames()},
		{[]string{"tlsbench", "cps", "--profile", "ecdhe-r"},
			[]string{"ecdhe-rsa-aes128-gcm-sha256-p256", "ecdhe-rsa-aes256-gcm-sha384-p256"}},
		{[]string{"tlsbench", "cps", "--profile", "=", "rsa"},
			[]string{"rsa2048-aes128-gcm-sha256", "rsa4096-aes256-gcm-sha384"}},
		{[]string{"tlsbench", "throughput", "-d", "10s", "--profile", "tls13-x"}, []string{"tls13-x25519mlkem768"}},
		{[]string{"tlsbench", "qualify", "--test", ""}, []string{"cps", "throughput"}},
		{[]string{"tlsbench", "qualify", "--executor", "k"}, []string{"kubernetes"}},
		{[]string{"tlsbench", "report", "-f", "h"}, []string{"hlog", "html"}},
		{[]string{"tlsbench", "k8s", ""}, []string{"manifest"}},
		{[]string{"tlsbench", "k8s", "manifest", "--a"}, []string{"--active-deadline", "--agents"}},
		{[]string{"tlsbench", "completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"tlsbench", "profiles", "s"}, []string{"show", "suites"}},
		{[]string{"tlsbench", "cps", "-c", ""}, nil}, // a number: nothing offered
	}
	// Every command's flags, from its flag set.
	for _, c := range allCommandFlags() {
		words := append(append([]string{"tlsbench"}, strings.Fields(c.name)...), "--")
		cases = append(cases, tc{words, longFlags(c)})
	}
	var prog strings.Builder
	fmt.Fprintf(&prog, "source %q\ncomplete -p tlsbench\n", script)
	for _, c := range cases {
		var quoted []string
		for _, w := range c.words {
			quoted = append(quoted, fmt.Sprintf("%q", w))
		}
		fmt.Fprintf(&prog, "COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _tlsbench; printf '%%s\\n' \"${COMPREPLY[*]}\"\n", strings.Join(quoted, " "), len(c.words)-1)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("bash: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases)+1 {
		t.Fatalf("bash printed %d lines for %d cases:\n%s", len(lines), len(cases), out)
	}
	if lines[0] != "complete -F _tlsbench tlsbench" {
		t.Errorf("complete -p tlsbench: %q", lines[0])
	}
	for i, c := range cases {
		got := sorted(strings.Fields(lines[i+1]))
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: completed %q, want %q", c.words, got, c.want)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestCompletionFish: fish parses the script, and its own completer
// (complete -C) offers the commands, a command's flags and the values of
// --profile and --test.
func TestCompletionFish(t *testing.T) {
	fish := needShell(t, "fish")
	script := completionScript(t, "fish")
	if out, err := exec.Command(fish, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("fish -n: %v: %s", err, out)
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"tlsbench co", []string{"collect", "compare", "completion"}},
		{"tlsbench cps --prof", []string{"--profile", "--profile-file"}},
		{"tlsbench cps --profile ", builtinProfileNames()},
		{"tlsbench qualify --test ", []string{"cps", "throughput"}},
		{"tlsbench k8s manifest --ag", []string{"--agents"}},
	} {
		out, err := exec.Command(fish, "--no-config", "-c", fmt.Sprintf("source %s; complete -C %s", script, fishQuote(tc.line))).CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v: %s", err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if w, _, _ := strings.Cut(l, "\t"); w != "" {
				got = append(got, w)
			}
		}
		if got = sorted(got); !slices.Equal(got, tc.want) {
			t.Errorf("complete -C %q: %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestCompletionZsh: zsh parses the script and, with compinit, registers
// it for tlsbench.
func TestCompletionZsh(t *testing.T) {
	zsh := needShell(t, "zsh")
	script := completionScript(t, "zsh")
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v: %s", err, out)
	}
	prog := fmt.Sprintf("autoload -U compinit; compinit -u -D; source %s; print -r -- ${_comps[tlsbench]}; whence -w _tlsbench", script)
	cmd := exec.Command(zsh, "-f", "-c", prog)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "_tlsbench\n_tlsbench: function\n" {
		t.Errorf("zsh: %v: %q", err, out)
	}
}

func TestCompletionBadShell(t *testing.T) {
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}, {"completion", "bash", "zsh"}} {
		code, stdout, stderr := invoke(t, context.Background(), args...)
		if code != exitBadUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "bash, zsh, fish") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line naming the shells", args, code, stdout, stderr)
		}
	}
}

// TestManPage: the page names every command and every flag, and groff
// (and man -l) render it without a warning.
func TestManPage(t *testing.T) {
	code, page, stderr := invoke(t, context.Background(), "man")
	if code != exitOK || stderr != "" {
		t.Fatalf("man: exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(page, ".TH TLSBENCH 1 ") {
		t.Errorf("the page starts %.40q", page)
	}
	for _, c := range allCommandFlags() {
		if !strings.Contains(page, fmt.Sprintf(".SS \"tlsbench %s\"\n", roff(c.name))) {
			t.Errorf("no section for the command %q", c.name)
		}
		for _, f := range flagList(c.fs) {
			if !strings.Contains(page, `\fB\-\-`+roff(f.Name)+`\fR`) {
				t.Errorf("%s: no flag --%s", c.name, f.Name)
			}
		}
	}
	file := filepath.Join(t.TempDir(), "tlsbench.1")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed (Debian package groff-base)")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", file)
	var text, warn bytes.Buffer
	cmd.Stdout, cmd.Stderr = &text, &warn
	if err := cmd.Run(); err != nil || warn.Len() > 0 {
		t.Fatalf("groff -man -Tutf8 -ww: %v: %s", err, warn.String())
	}
	// groff's text: the commands' sections, a flag with its value name.
	plain := regexpStrip(text.String())
	for _, want := range []string{"tlsbench cps", "tlsbench k8s manifest", "-c, --concurrency N", "--profile NAME", "EXIT STATUS"} {
		if !strings.Contains(plain, want) {
			t.Errorf("groff's rendering lacks %q", want)
		}
	}
	if man, err := exec.LookPath("man"); err == nil {
		cmd := exec.Command(man, "-l", file)
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "MANWIDTH=100")
		var out, warn bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &warn
		if err := cmd.Run(); err != nil || warn.Len() > 0 || !strings.Contains(regexpStrip(out.String()), "tlsbench qualify") {
			t.Errorf("man -l: %v: %s", err, warn.String())
		}
	}
}

// regexpStrip removes groff's overstrikes (bold, underline) from text.
func regexpStrip(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if i+1 < len(rs) && rs[i+1] == '\b' {
			i++ // the character before a backspace is overstruck
			continue
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}
