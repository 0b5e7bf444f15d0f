package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

const manUsage = `tlsbench man

Prints the man page of tlsbench (roff, section 1), generated from every
command's help and flags:

  tlsbench man > tlsbench.1 && man -l tlsbench.1`

func runMan(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("man")
	if err := parseFlags(fs, manUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usagef("takes no arguments")
	}
	_, err := io.WriteString(stdout, manPage(allCommandFlags(), manDate()))
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
