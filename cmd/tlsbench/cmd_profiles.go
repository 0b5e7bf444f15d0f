package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tlsbench/tlsbench/cipher"
)

const profilesUsage = `tlsbench profiles [--profile-file FILE]... [show NAME | suites | groups]

Lists the cipher profiles (built in and from --profile-file), prints one
profile's YAML, or lists the cipher suites and groups profiles may name.`

func runProfiles(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags("profiles")
	files := fs.StringArray("profile-file", nil, "add the profiles of a YAML `FILE` (repeatable)")
	if err := parseFlags(fs, profilesUsage, args, stdout); err != nil {
		return helpOK(err)
	}
	set, err := loadProfiles(*files)
	if err != nil {
		return err
	}
	rest := fs.Args()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	switch {
	case len(rest) == 0:
		fmt.Fprintln(tw, "NAME\tVERSION\tSUITE (OpenSSL)\tGROUP\tCERT KEY\tSOURCE")
		for _, p := range set.All() {
			ck := p.ExpectedCertKey().String()
			if ck == "" {
				ck = "(any)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n",
				p.Name, p.ExpectedVersion().Short(), p.SuiteLabel(), p.GroupLabel(), ck, p.Source)
		}
	case rest[0] == "show" && len(rest) == 2:
		p, err := set.Get(rest[1])
		if err != nil {
			return usagef("%s", err)
		}
		_, err = stdout.Write(p.YAML())
		return err
	case rest[0] == "suites" && len(rest) == 1:
		fmt.Fprintln(tw, "ID\tIANA\tOPENSSL\tVERSIONS\tKEY EXCHANGE\tNOTE")
		for _, s := range cipher.Suites() {
			vers, kx, note := "TLS1.0-1.2", s.KeyExch, ""
			if s.TLS13 {
				vers, kx, note = "TLS1.3", "(any)", "observed, cannot be pinned"
			}
			if s.Insecure {
				note = "insecure"
			}
			fmt.Fprintf(tw, "0x%04X\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.IANA, s.OpenSSL, vers, kx, note)
		}
	case rest[0] == "groups" && len(rest) == 1:
		fmt.Fprintln(tw, "ID\tNAME\tOPENSSL\tALIASES\tNOTE")
		for _, g := range cipher.Groups() {
			note := ""
			if g.TLS13Only {
				note = "TLS 1.3 only (hybrid post-quantum)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%v\t%s\n", g.ID, g.Name, g.OpenSSL, g.Aliases, note)
		}
	default:
		return usagef("unknown arguments %q (want: show NAME, suites or groups)", rest)
	}
	return tw.Flush()
}

// helpOK turns errHelp into success.
func helpOK(err error) error {
	if err == errHelp {
		return nil
	}
	return err
}
