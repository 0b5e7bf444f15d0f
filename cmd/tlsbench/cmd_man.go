package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"
)

//go:generate sh -c "go run . man --format markdown > ../../docs/COMMANDS.md"

const manUsage = `tlsbench man [--format roff|markdown]

Prints the man page of tlsbench (roff, section 1), generated from every
command's help and flags; --format markdown prints the same reference as
Markdown (docs/COMMANDS.md is that output):

  tlsbench man > tlsbench.1 && man -l tlsbench.1
  tlsbench man --format markdown > docs/COMMANDS.md`

func runMan(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("man")
	format := fs.String("format", "roff", "`FORMAT`: roff (the man page) or markdown (docs/COMMANDS.md)")
	if err := parseFlags(fs, manUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("takes no arguments")
	}
	var page string
	switch *format {
	case "roff":
		page = manPage(allCommandFlags(), manDate())
	case "markdown", "md":
		page = manMarkdown(allCommandFlags())
	default:
		return usagef("--format %q: want roff or markdown", *format)
	}
	_, err := io.WriteString(stdout, page)
	return err
}

// manDate is the page's date: SOURCE_DATE_EPOCH's (reproducible builds)
// when set, else today.
func manDate() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Now().UTC()
}

// roff escapes text for a roff line: backslashes, hyphens as minus signs
// (options copy and paste), non-ASCII as \[uXXXX], and a leading dot or
// quote.
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 126:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if strings.HasPrefix(out, ".") || strings.HasPrefix(out, "'") {
		out = `\&` + out
	}
	return out
}

// manPage writes the page: NAME, SYNOPSIS, DESCRIPTION, then each command
// with its help and its flags, then EXIT STATUS and SEE ALSO.
func manPage(cmds []cmdFlags, date time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH TLSBENCH 1 %q %q \"User Commands\"\n", date.Format("2006-01-02"), "tlsbench "+version)
	b.WriteString(`.SH NAME
tlsbench \- benchmark devices that terminate TLS
.SH SYNOPSIS
.B tlsbench
.I COMMAND
.RI [ flags ]
.RI [ args ]
.SH DESCRIPTION
tlsbench measures TLS\-terminating devices (load balancers, ADCs, reverse proxies):
full\-handshake connections per second (CPS) and encrypted throughput, verified
against cipher profiles; it runs the qualification method of test labs, renders
reports, and serves a reference target.
Run
.B tlsbench help
.I COMMAND
for a command's help.
.SH COMMANDS
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, ".SS \"tlsbench %s\"\n", roff(c.name))
		b.WriteString(roff(c.summary) + ".\n")
		if c.usage != "" {
			manText(&b, c.usage)
		}
		flags := flagList(c.fs)
		if len(flags) == 0 {
			continue
		}
		b.WriteString(".PP\nFlags:\n")
		for _, f := range flags {
			name, usage := pflag.UnquoteUsage(f)
			b.WriteString(".TP\n")
			if f.Shorthand != "" {
				fmt.Fprintf(&b, `\fB\-%s\fR, `, roff(f.Shorthand))
			}
			fmt.Fprintf(&b, `\fB\-\-%s\fR`, roff(f.Name))
			if name != "" {
				fmt.Fprintf(&b, ` \fI%s\fR`, roff(name))
			}
			b.WriteString("\n" + roff(usage))
			if d := f.DefValue; d != "" && d != "[]" && d != "false" && d != "0" && d != "0s" {
				fmt.Fprintf(&b, " (default %s)", roff(d))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString(`.SH EXIT STATUS
.TP
0
the work was done (a run's errors are data in its record)
.TP
1
it could not be done: target unreachable, no transaction succeeded
.TP
2
bad usage or input (one line on stderr names the problem)
.SH SEE ALSO
.BR openssl (1),
.BR haproxy (1),
.BR nginx (8);
the README and docs/ of tlsbench.
`)
	return b.String()
}

// manText writes a command's help: its synopsis (the first line) in bold,
// its paragraphs filled, indented lines (examples, lists) as they are.
func manText(b *strings.Builder, usage string) {
	paras := strings.Split(usage, "\n\n")
	fmt.Fprintf(b, ".PP\n.B %s\n", roff(strings.Split(paras[0], "\n")[0]))
	for _, p := range paras[1:] {
		lines := strings.Split(p, "\n")
		if strings.HasPrefix(lines[0], " ") {
			b.WriteString(".PP\n.nf\n")
			for _, l := range lines {
				b.WriteString(roff(l) + "\n")
			}
			b.WriteString(".fi\n")
			continue
		}
		b.WriteString(".PP\n")
		for _, l := range lines {
			b.WriteString(roff(strings.TrimSpace(l)) + "\n")
		}
	}
}

// manMarkdown writes the command reference of docs/COMMANDS.md from the
// same source as the man page: each command's help and flags. It carries
// no date and no version, so that the committed file changes only when a
// command's help or flags do (TestCommandsDocIsGenerated).
func manMarkdown(cmds []cmdFlags) string {
	var b strings.Builder
	b.WriteString("# tlsbench commands\n\n" +
		"<!-- Generated by `tlsbench man --format markdown` (go generate ./cmd/tlsbench) from the " +
		"commands' help and flags; do not edit by hand. -->\n\n" +
		"Every command and flag, as `tlsbench help COMMAND` prints them. Exit status of every command: " +
		"**0** the work was done (a run's errors are data in its record); **1** it could not be done " +
		"(target unreachable, no transaction succeeded, interrupted); **2** bad usage or input " +
		"(one line on stderr names the problem).\n\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "- [`tlsbench %s`](#%s): %s\n", c.name, mdSlug("tlsbench "+c.name), mdText(c.summary))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "\n## `tlsbench %s`\n\n%s.\n", c.name, mdText(c.summary))
		if c.usage != "" {
			mdUsage(&b, c.usage)
		}
		flags := flagList(c.fs)
		if len(flags) == 0 {
			continue
		}
		b.WriteString("\n| flag | default | meaning |\n|---|---|---|\n")
		for _, f := range flags {
			name, usage := pflag.UnquoteUsage(f)
			flag := "--" + f.Name
			if f.Shorthand != "" {
				flag = "-" + f.Shorthand + ", " + flag
			}
			if name != "" {
				flag += " " + name
			}
			def := ""
			if d := f.DefValue; d != "" && d != "[]" && d != "false" && d != "0" && d != "0s" {
				def = "`" + mdCell(d) + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", mdCell(flag), def, mdCell(mdText(usage)))
		}
	}
	return b.String()
}

// mdUsage writes a command's help as manText does: the synopsis, then its
// paragraphs joined, indented lines (examples, lists) as a code block.
func mdUsage(b *strings.Builder, usage string) {
	paras := strings.Split(usage, "\n\n")
	fmt.Fprintf(b, "\n```text\n%s\n```\n", strings.Split(paras[0], "\n")[0])
	for _, p := range paras[1:] {
		lines := strings.Split(p, "\n")
		if strings.HasPrefix(lines[0], " ") {
			fmt.Fprintf(b, "\n```text\n%s\n```\n", p)
			continue
		}
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		fmt.Fprintf(b, "\n%s\n", mdText(strings.Join(lines, " ")))
	}
}

// mdText escapes the characters Markdown would read as markup in running
// text, outside the help's code spans (backquoted), which are kept.
func mdText(s string) string {
	esc := strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backquote: no code spans
		return esc.Replace(s)
	}
	for i := 0; i < len(parts); i += 2 {
		parts[i] = esc.Replace(parts[i])
	}
	return strings.Join(parts, "`")
}

// mdCell escapes a table cell's pipes.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// mdSlug is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores dropped.
func mdSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
