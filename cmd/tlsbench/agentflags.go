package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
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
	a := &runner.Agent{Name: lf.agentName, Shards: 1, StartAt: lf.startAt, StartTolerance: lf.startTolerance, ReportTo: lf.reportTo}
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
func parseEngineArgs(args []string) (*loadCmd, error) {
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
