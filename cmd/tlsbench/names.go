package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/engine/tlsconn"
	"github.com/tlsbench/tlsbench/bench/method/plan"
	"github.com/tlsbench/tlsbench/bench/target"
)

// The many server names of a run: the engines' --sni-list FILE and
// --sni-count N (with --sni as their pattern), serve's --names N and
// --names-pattern. Both sides default to target.DefaultNamePattern, so that
// `tlsbench serve --names 1000` and `tlsbench cps --sni-count 1000 URL`
// agree.

// sniFlags are the engines' flags of many server names.
type sniFlags struct {
	list  string    // --sni-list FILE
	count countFlag // --sni-count N
}

// countFlag is an int flag that knows whether it was given (a given 0 is
// refused, not taken for "none").
type countFlag struct {
	n   int
	set bool
}

func (c *countFlag) String() string { return strconv.Itoa(c.n) }
func (c *countFlag) Type() string   { return "int" }
func (c *countFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	c.n, c.set = n, true
	return nil
}

// add adds --sni-list and --sni-count to an engine command.
func (f *sniFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.list, "sni-list", "", "send the server names of `FILE` (one a line; # comments) in turn, one per "+
		"connection, each verified as its own")
	fs.Var(&f.count, "sni-count", "send `N` server names in turn: --sni's pattern (one %d, numbered from 1; "+
		"default "+target.DefaultNamePattern+")")
}

// resolveNames sets the spec's server names from --sni-list or
// --sni-count (with --sni as the pattern); without either, a --sni with a
// %d is refused.
func (lf *loadFlags) resolveNames() error {
	f := &lf.sniNames
	counted := f.count.set
	switch {
	case f.list != "" && counted:
		return usagef("--sni-list and --sni-count both give the server names: give one")
	case f.list != "" && lf.sni != "":
		return usagef("--sni sends one server name, --sni-list the list's: give one")
	case f.list != "":
		names, err := readNameList(f.list)
		if err != nil {
			return err
		}
		lf.spec.ServerNames = names
	case counted:
		pattern := lf.sni
		if pattern == "" {
			pattern = target.DefaultNamePattern
		}
		names, err := patternNames("--sni-count", "--sni", f.count.n, pattern)
		if err != nil {
			return err
		}
		lf.spec.ServerNames = names
	case strings.Contains(lf.sni, "%"):
		return usagef("bad --sni %q: a pattern of names (%%d) needs --sni-count N", lf.sni)
	case lf.sni != "": // the checks of --sni-list's names
		name, err := plan.ALabel(lf.sni)
		if err != nil {
			return usagef("bad --sni %q: not a valid internationalized name", lf.sni)
		}
		if err := tlsconn.CheckServerName(name); err != nil {
			return usagef("bad --sni %q: not a host name: %v", lf.sni, err)
		}
	}
	return nil
}

// plainSNI is --sni when it names the one server name of the run; "" when
// it is the pattern of --sni-count.
func (lf *loadFlags) plainSNI() string {
	if len(lf.spec.ServerNames) > 0 {
		return ""
	}
	return lf.sni
}

// patternNames returns the count names of pattern (--sni-count's or
// serve's --names), each checked as a server name.
func patternNames(countFlag, patternFlag string, count int, pattern string) ([]string, error) {
	if count < 1 || count > tlsconn.MaxServerNames {
		return nil, usagef("bad %s %d: want 1 to %d", countFlag, count, tlsconn.MaxServerNames)
	}
	names, err := target.NamesOf(pattern, count)
	if err != nil {
		return nil, usagef("bad %s: %v", patternFlag, err)
	}
	// The first and the last differ only in their number's digits: if
	// both are host names, so is every other.
	for _, name := range []string{names[0], names[len(names)-1]} {
		if err := tlsconn.CheckServerName(name); err != nil {
			return nil, usagef("bad %s %q: name %q: %v", patternFlag, pattern, name, err)
		}
	}
	return names, nil
}

// readNameList reads --sni-list: one server name a line (an
// internationalized name is sent as its A-label), blank lines and lines
// beginning with # skipped; every name valid, none twice, at least one and
// at most tlsconn.MaxServerNames.
func readNameList(file string) ([]string, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, usagef("--sni-list: %v", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 4096), 4096)
	var names []string
	seen := map[string]int{} // lower-case name → its line
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		bad := func(why string) error { return usagef("bad --sni-list %s line %d: %q %s", file, line, text, why) }
		name, err := plan.ALabel(text)
		if err != nil {
			return nil, bad("is not a valid internationalized name")
		}
		if err := tlsconn.CheckServerName(name); err != nil {
			return nil, bad(fmt.Sprintf("is not a host name: %v", err))
		}
		if first, ok := seen[strings.ToLower(name)]; ok {
			return nil, bad(fmt.Sprintf("repeats line %d (each name once)", first))
		}
		if len(names) == tlsconn.MaxServerNames {
			return nil, usagef("bad --sni-list %s: more than %d names", file, tlsconn.MaxServerNames)
		}
		seen[strings.ToLower(name)] = line
		names = append(names, name)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, usagef("bad --sni-list %s: a line longer than 4 KiB (a name has 253 characters at most)", file)
	} else if err != nil {
		return nil, usagef("--sni-list %s: %v", file, pathErr(err))
	}
	if len(names) == 0 {
		return nil, usagef("--sni-list %s has no server name (only blank lines and comments)", file)
	}
	return names, nil
}

// serveNames is serve's --names N, --names-pattern PATTERN: the names
// served a certificate each, nil without --names.
func serveNames(fs *pflag.FlagSet, c *serveCmd, count int, pattern string) ([]string, error) {
	if !fs.Changed("names") {
		if fs.Changed("names-pattern") {
			return nil, usagef("--names-pattern gives the names of --names N: give --names")
		}
		return nil, nil
	}
	if c.certFile != "" || c.cfg.Plain {
		return nil, usagef("--names generates a certificate per name: not with --cert or --plain")
	}
	return patternNames("--names", "--names-pattern", count, pattern)
}
