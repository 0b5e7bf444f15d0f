package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tlsbench/tlsbench/bench/agent"
	"github.com/tlsbench/tlsbench/bench/runner"
)

// resolveAgent checks the agent flags: this process is shard i of N of one
// distributed run, starting at an agreed time and pushing its record; nil
// when none was given.
func (lf *loadFlags) resolveAgent() (*runner.Agent, error) {
	if lf.startTolerance < 0 {
		return nil, usagef("--start-tolerance must not be negative, got %s", lf.startTolerance)
	}
	if !lf.shard.set && lf.startAt.IsZero() && lf.agentName == "" && lf.reportTo == "" {
		return nil, nil
	}
	a := &runner.Agent{
		Name: lf.agentName, Shards: 1, StartAt: lf.startAt, StartTolerance: lf.startTolerance, ReportTo: lf.reportTo,
	}
	if a.Name == "" {
		host, _ := os.Hostname()
		a.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if lf.shard.set {
		a.Shard, a.Shards = lf.shard.i, lf.shard.n
	}
	if a.ReportTo != "" {
		u, err := url.Parse(a.ReportTo)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usagef("bad --report-to %q: want http://HOST:PORT[/PATH] of a collector (tlsbench collect)", a.ReportTo)
		}
	}
	return a, nil
}

// errAgentDeviceCounters refuses --device-counters in one agent of several:
// the device counts every agent's connections, the agent only its share, so
// the comparison would always disagree (and N agents would poll the
// device). The device's counts of a distributed run belong beside the
// merged record, on the collector's side, which does not read them.
var errAgentDeviceCounters = errors.New("--device-counters is not for the agents of a distributed run: " +
	"the device counts all agents' connections, each agent only its share; " +
	"read the device's counters around the run beside the merged record instead")

// parseShard parses i/N with 0 ≤ i < N.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, usagef("bad --shard %q: want i/N, e.g. 0/4", s)
	}
	if n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("bad --shard %q: want 0 ≤ i < N", s)
	}
	return i, n, nil
}

// parseEngineArgs parses an engine command line (args[0] is cps or
// throughput) as the command itself does, without running it.
func parseEngineArgs(args []string) (*loadFlags, error) {
	if len(args) == 0 {
		return nil, usagef("no engine command: want cps or throughput and its arguments")
	}
	var (
		eng   engineSpec
		fs    *pflag.FlagSet
		lf    *loadFlags
		usage string
	)
	switch args[0] {
	case "cps":
		eng, fs, lf = cpsCommand(io.Discard)
		usage = cpsUsage
	case "throughput":
		eng, fs, lf = throughputCommand()
		usage = throughputUsage
	default:
		return nil, usagef("engine %q: want cps or throughput", args[0])
	}
	c, err := parseLoad(eng, fs, lf, args[1:], usage, io.Discard)
	if err == nil && eng.check != nil {
		err = eng.check()
	}
	return c, err
}

// pushAuthFlags are an agent's credentials for its push (--report-to).
type pushAuthFlags struct {
	tokenFile, caFile string
	cred              agent.Credentials
}

func (p *pushAuthFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.tokenFile, "token-file", "", "agent: sign the pushed record with the run's token in `FILE` (mode "+
		"0600; default $"+agent.EnvToken+")")
	fs.StringVar(&p.caFile, "report-cacert", "", "agent: verify an https collector with the CA certificate in `FILE` "+
		"(default $"+agent.EnvCollectorCA+", else the system's)")
}

// resolve reads the credentials of a push to reportTo (runLoad calls it
// once the command line is parsed: parsing reads no file).
func (p *pushAuthFlags) resolve(reportTo string) error {
	if reportTo == "" {
		if p.tokenFile != "" || p.caFile != "" {
			return usagef("--token-file and --report-cacert need --report-to")
		}
		return nil
	}
	tok, err := readToken(p.tokenFile, false, io.Discard)
	if err != nil {
		return err
	}
	p.cred = agent.Credentials{Token: tok, CA: []byte(os.Getenv(agent.EnvCollectorCA))}
	if p.caFile != "" {
		if p.cred.CA, err = os.ReadFile(p.caFile); err != nil {
			return usagef("--report-cacert: %v", pathErr(err))
		}
	}
	if len(p.cred.CA) > 0 && !strings.HasPrefix(reportTo, "https://") {
		return usagef("--report-cacert (or $%s) is for an https collector; --report-to is %q", agent.EnvCollectorCA, reportTo)
	}
	return nil
}

// hello checks, before any load, that the collector at reportTo takes this
// agent's record (agent.Hello: reachable, the token known, the run open),
// and binds the push to the collector's session; an error is one line
// naming the collector (exit 1, no load sent).
func (p *pushAuthFlags) hello(ctx context.Context, reportTo string) error {
	if reportTo == "" {
		return nil
	}
	cred, err := agent.Hello(ctx, reportTo, p.cred)
	if err != nil {
		return fmt.Errorf("the collector at %s will not take the record (no load sent): %w", reportTo, err)
	}
	p.cred = cred
	return nil
}

// readToken returns the run's token from file (--token-file) or, without
// one, from $TLSBENCH_TOKEN. A token file must not be readable or writable
// by others (like ssh's keys); with create, a missing file is created
// (mode 0600) with a new token, and said so on w.
func readToken(file string, create bool, w io.Writer) (string, error) {
	if file == "" {
		tok := os.Getenv(agent.EnvToken)
		if tok == "" {
			return "", usagef("no token: give the run's token with --token-file FILE or $%s (records are only taken signed "+
				"with it)", agent.EnvToken)
		}
		if err := agent.CheckToken(tok); err != nil {
			return "", usagef("$%s: %v", agent.EnvToken, err)
		}
		return tok, nil
	}
	st, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) && create {
		tok, err := agent.NewToken()
		if err != nil {
			return "", err
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", usagef("--token-file: %v", pathErr(err))
		}
		_, err = fmt.Fprintln(f, tok)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		fmt.Fprintf(w, "tlsbench: wrote a new token to %s (give it to the agents: --token-file or "+
			"$%s)\n", file, agent.EnvToken)
		return tok, nil
	}
	if err != nil {
		return "", usagef("--token-file: %v", pathErr(err))
	}
	if !st.Mode().IsRegular() {
		return "", usagef("--token-file %s: not a regular file", file)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", usagef("--token-file %s: mode %04o lets others read or change it; chmod 600 %s", file, perm, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", usagef("--token-file: %v", pathErr(err))
	}
	tok := strings.TrimSpace(string(data))
	if err := agent.CheckToken(tok); err != nil {
		return "", usagef("--token-file %s: %v", file, err)
	}
	return tok, nil
}
